// The samples' stacks as a trie of frames (Profile::stack_frames): each raw stack node is read
// once per way of reading it, and a stack cut short or broken keeps its known frames under one
// pseudo-frame for its missing part.
#include <cstdint>

#include "format/schema.h"
#include "model/profile_builder.h"

namespace hotline::model {

namespace {

constexpr uint64_t kBrokenFlags = format::kSampleTruncated | format::kSampleBroken;

}  // namespace

FrameId ProfileBuilder::frame(FrameId caller, FunctionId fn, LineId line, uint64_t address) {
  uint32_t depth = caller.valid() ? profile_.stack_frames[caller.index()].depth + 1 : 1;
  profile_.stack_frames.push_back(StackFrame{fn, line, address, caller, depth});
  return FrameId(profile_.stack_frames.size() - 1);
}

FrameId ProfileBuilder::enter(FrameId top, const Frames& frames) {
  for (uint32_t k = 0; k < frames.count; ++k) {
    FunctionId fn = arena_[frames.offset + k];
    if (top.valid() && profile_.stack_frames[top.index()].function == fn &&
        profile_.functions[fn.index()].pseudo != PseudoKind::kNone)
      continue;
    const FrameInfo& info = frame_info_[frames.offset + k];
    top = frame(top, fn, info.line, info.address);
  }
  return top;
}

FrameId ProfileBuilder::pseudoRoot(FunctionId fn) {
  auto [it, inserted] = pseudo_roots_.try_emplace(fn.index());
  if (inserted) it->second = frame(FrameId(), fn, line(profile_.functions[fn.index()].file, 0), 0);
  return it->second;
}

FunctionId ProfileBuilder::missingPart(uint32_t mode) {
  const char* name = (mode & kChainCut) ? "[truncated]" : "[broken stack]";
  return pseudoFunction(PseudoKind::kBrokenStack, name,
                        pseudoModule(PseudoKind::kBrokenStack, name));
}

const ProfileBuilder::SampleStack& ProfileBuilder::pseudoStack(FunctionId fn) {
  auto [it, inserted] = pseudo_stacks_.try_emplace(fn.index());
  SampleStack& s = it->second;
  if (inserted) {
    const Function& f = profile_.functions[fn.index()];
    s.line = line(f.file, 0);
    s.module = f.module;
    s.leaf = pseudoRoot(fn);
    s.stack = StackId(profile_.stacks.size());
    profile_.stacks.push_back(Stack{s.leaf});
  }
  return s;
}

bool ProfileBuilder::runtimeThread(const format::RawProfile& raw, uint64_t tid) {
  auto [it, inserted] = runtime_threads_.try_emplace(tid, false);
  if (inserted)
    for (const format::RawThread& t : raw.threads)
      if (t.tid == tid && (t.flags & format::kThreadRuntime)) it->second = true;
  return it->second;
}

FrameId ProfileBuilder::callers(const format::RawProfile& raw, uint64_t node, uint32_t mode,
                                uint64_t time) {
  // Up to the first node already read in this mode (or the outermost), then down again: each
  // node is read once per mode, however many stacks pass through it.
  chain_scratch_.clear();
  FrameId top;
  bool lost = false;
  // A well-formed trie has parents defined before children, so a chain can never be longer
  // than the node count; the bound also stops cycles in a forged file.
  size_t limit = raw.stack_nodes.size();
  NodeFrames& chains = chainsAt(epochAt(raw, time), mode);
  for (uint64_t at = node;;) {
    if (at == 0) break;
    if (const FrameId* done = chains.find(at)) {
      top = *done;
      break;
    }
    auto it = raw.stack_nodes.find(at);
    if (it == raw.stack_nodes.end() || limit-- == 0) {
      lost = true;
      break;
    }
    chain_scratch_.emplace_back(at, it->second.address);
    at = it->second.parent;
  }
  if (!top.valid() && (lost || (mode & (kChainBroken | kChainCut)))) {
    // The known frames keep their time; the missing outer part of the stack is one
    // pseudo-frame, so the broken samples show up as a section of the call graph.
    top = pseudoRoot(missingPart(lost ? kChainBroken : mode));
  }
  for (size_t k = chain_scratch_.size(); k-- > 0;) {
    // A shadow stack holds entry addresses of traced functions, looked up as they are.
    const Frames& frames = expand(raw, chain_scratch_[k].second, !(mode & kChainShadow), time);
    // A runtime frame between two of the program's is a pass-through shim (a sleep, the thread
    // trampoline, an allocator wrapper): not a frame of the program. Only code that runs in the
    // runtime itself, innermost, is the profiler's time.
    if (!(frames.count == 1 &&
          profile_.functions[arena_[frames.offset].index()].pseudo == PseudoKind::kProfiler))
      top = enter(top, frames);
    chains.set(chain_scratch_[k].first, top, raw.stack_nodes.size());
  }
  return top;
}

const ProfileBuilder::SampleStack& ProfileBuilder::stack(const format::RawProfile& raw,
                                                         const format::SampleRecord& sample) {
  if ((sample.flags & format::kSampleInRuntime) || runtimeThread(raw, sample.tid)) {
    // Whatever the runtime was doing, the time is the profiler's, not the program's.
    if (!profiler_stack_)
      profiler_stack_ = pseudoStack(pseudoFunction(
          PseudoKind::kProfiler, "[profiler]", pseudoModule(PseudoKind::kProfiler, "[profiler]")));
    return *profiler_stack_;
  }
  bool flagged_broken = (sample.flags & kBrokenFlags) != 0;
  bool cut = (sample.flags & kBrokenFlags) == format::kSampleTruncated;
  bool shadow = (sample.flags & format::kSampleShadowStack) != 0;
  uint32_t mode = (cut              ? kChainCut
                   : flagged_broken ? kChainBroken
                                    : 0) |
                  (shadow ? kChainShadow : 0);
  ChainKey key{sample.node, mode | epochAt(raw, sample.time) * kChainModes};
  auto found = stacks_.find(key);
  if (found != stacks_.end()) return found->second;

  SampleStack result;
  auto leaf_node = sample.node ? raw.stack_nodes.find(sample.node) : raw.stack_nodes.end();
  if (leaf_node == raw.stack_nodes.end()) {
    // No frames: none recorded, or the node's record was lost.
    result = flagged_broken || sample.node != 0
                 ? pseudoStack(missingPart(sample.node != 0 ? kChainBroken : mode))
                 : pseudoStack(pseudoFunction(PseudoKind::kUnknown, "[unknown]",
                                              pseudoModule(PseudoKind::kUnknown, "[unknown]")));
  } else {
    FrameId top = callers(raw, leaf_node->second.parent, mode, sample.time);
    const Frames& leaf = expand(raw, leaf_node->second.address, false, sample.time);
    // The interrupted instruction inside the innermost traced function: its own frames (with
    // the inline chain and the line) replace that function's entry frame.
    if (shadow && leaf.count > 0 && top.valid() &&
        profile_.stack_frames[top.index()].function == arena_[leaf.offset])
      top = profile_.stack_frames[top.index()].caller;
    result.leaf = enter(top, leaf);
    result.line = leaf.line;
    result.module = leaf.module;
    result.stack = StackId(profile_.stacks.size());
    profile_.stacks.push_back(Stack{result.leaf});
  }
  return stacks_.emplace(key, result).first->second;
}

}  // namespace hotline::model

#include "model/build.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <span>
#include <unordered_map>

#include "format/schema.h"
#include "model/call_graph.h"
#include "model/merge.h"
#include "model/order.h"
#include "model/stack_path.h"
#include "model/system_code.h"
#include "model/trace.h"

namespace hotline::model {

namespace {

std::string baseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

constexpr uint64_t kBrokenFlags = format::kSampleTruncated | format::kSampleBroken;

std::string FormatMs(uint64_t ns) {
  char text[32];
  snprintf(text, sizeof text, "%.1f ms", double(ns) / 1e6);
  return text;
}

bool IsRuntimeModule(const std::string& path) {
  return baseName(path).starts_with("libhotline-rt.");
}

class ProfileBuilder {
 public:
  ProfileBuilder(AddressResolver& resolver, const BuildOptions& options)
      : resolver_(resolver), options_(options) {}

  void addSample(const format::RawProfile& raw, const format::SampleRecord& sample);
  Expected<Profile> finish(const format::RawProfile& raw);

 private:
  // Gives each thread's CPU time that no sample stands for to `[unsampled]` (DESIGN.md rule 4),
  // and warns about the threads that lost much.
  void accountUnsampled(const format::RawProfile& raw);

 private:
  // The frames of one address (its inline chain), a run of function ids in arena_ (outermost
  // first) with the innermost one's line and module.
  struct Frames {
    uint32_t offset = 0, count = 0;
    LineId line;
    ModuleId module;
  };
  // What arena_ holds beside each function id: the line and the address of that frame.
  struct FrameInfo {
    LineId line;
    uint64_t address = 0;
  };
  // A sample's stack: its innermost frame in the trie of profile_.stack_frames, the line and
  // module of that frame, and its StackId.
  struct SampleStack {
    FrameId leaf;
    LineId line;
    ModuleId module;
    StackId stack;
  };
  struct ThreadCursor {
    LineId last_line;
    uint32_t index = 0;  // into profile_.threads
    std::optional<StackPath> path;  // the thread's stack at its last sample
  };
  // A raw stack node read as the callers' part of a stack, in one mode (kChain*).
  struct ChainKey {
    uint64_t node;
    uint32_t mode;
    bool operator==(const ChainKey&) const = default;
  };
  struct ChainKeyHash {
    size_t operator()(const ChainKey& k) const {
      return std::hash<uint64_t>()(k.node * 4 + k.mode) ^ (k.node >> 62);
    }
  };
  // kChainCut: the stack goes on past what was recorded (the stack copy, --max-depth); its
  // missing part has a pseudo-frame of its own, apart from a walk that could not go on.
  static constexpr uint32_t kChainShadow = 1, kChainBroken = 2, kChainCut = 4, kChainModes = 8;
  // A FrameId per raw stack node id. The writer numbers nodes densely from 1, and a second
  // stream's from kAppendedIdBase + 1: two vectors hold those (4 bytes a node, where a hash
  // map would take 50), a hash map any other id (a forged file's).
  class NodeFrames {
   public:
    const FrameId* find(uint64_t id) const {
      auto [dense, offset] = place(id);
      if (offset < dense->size()) return (*dense)[offset].valid() ? &(*dense)[offset] : nullptr;
      auto it = other_.find(id);
      return it == other_.end() ? nullptr : &it->second;
    }
    // `nodes`: how many nodes the profile has; ids beyond twice that are not dense.
    void set(uint64_t id, FrameId frame, size_t nodes) {
      auto [dense, offset] = place(id);
      if (offset < dense->size() || offset <= 2 * nodes + 1024) {
        if (offset >= dense->size()) dense->resize(offset + 1);
        (*dense)[offset] = frame;
      } else {
        other_[id] = frame;
      }
    }

   private:
    std::pair<std::vector<FrameId>*, uint64_t> place(uint64_t id) const {
      bool second = id > format::kAppendedIdBase;
      auto* dense = const_cast<std::vector<FrameId>*>(second ? &second_ : &first_);
      return {dense, second ? id - format::kAppendedIdBase : id};
    }
    std::vector<FrameId> first_, second_;
    std::unordered_map<uint64_t, FrameId> other_;
  };

  FunctionId function(const std::string& name, const std::string& decl_file, uint32_t decl_line,
                      ModuleId module);
  FunctionId pseudoFunction(PseudoKind kind, const std::string& name, ModuleId module);
  FileId file(const std::string& path, PseudoKind pseudo);
  LineId line(FileId file, uint32_t line);
  ModuleId module(const format::RawModule& raw);
  ModuleId pseudoModule(PseudoKind kind, const std::string& name);
  Frames single(FunctionId fn, uint64_t address = 0);
  // A new frame of the trie under `caller` (invalid: outermost). Each raw stack node is read
  // once per mode (chains_), so the trie needs no search for equal frames.
  FrameId frame(FrameId caller, FunctionId fn, LineId line, uint64_t address);
  // `frames` (a run of arena_) entered on top of `top`; returns the new top. Consecutive frames
  // in one symbol-less module are one pseudo-frame, not a recursion.
  FrameId enter(FrameId top, const Frames& frames);
  // The outermost frame of the pseudo-function `fn`, and the stack of that frame alone: one
  // of each for each function.
  FrameId pseudoRoot(FunctionId fn);
  const SampleStack& pseudoStack(FunctionId fn);
  // The pseudo-function for the missing outer part of a stack: [truncated] when it was cut
  // (kChainCut), [broken stack] otherwise.
  FunctionId missingPart(uint32_t mode);
  // The top of the callers' part of a stack: raw node `node` and the nodes above it, as return
  // addresses (as entries on a shadow stack), outermost first, under `[broken stack]` when the
  // stack was flagged broken or the record of a node on the way was lost.
  FrameId callers(const format::RawProfile& raw, uint64_t node, uint32_t mode, uint64_t time);
  // Adds `ns` of `samples` to the time of `stack` on the thread at `thread_index`.
  void addStackTime(StackId stack, uint32_t thread_index, uint64_t ns, uint64_t samples);
  // Each line's inclusive time, and each function-line's times, from the stacks' times.
  void addLineTimes();
  const Frames& expand(const format::RawProfile& raw, uint64_t address, bool is_return,
                       uint64_t time);
  // A named frame (an interpreter's: format::FrameRecord), no symbolizer needed.
  Frames named(const format::RawProfile& raw, uint64_t address);
  const SampleStack& stack(const format::RawProfile& raw, const format::SampleRecord& sample);
  ThreadCursor& thread(uint64_t tid);
  // Whether `tid` is the runtime's own thread (sampled from outside): all its time is the
  // profiler's.
  bool runtimeThread(const format::RawProfile& raw, uint64_t tid);
  uint64_t period(const format::RawProfile& raw);
  // Whether the program had sampling switched off at `time` (hotline_stop(), the toggle signal,
  // --start-paused). Only the kernel sampler takes samples then: it runs outside the program
  // and learns of the switches from the runtime's records, read here.
  bool switchedOff(const format::RawProfile& raw, uint64_t time);

  AddressResolver& resolver_;
  BuildOptions options_;
  Profile profile_;
  CallGraphBuilder graph_;
  std::unordered_map<std::string, FunctionId> function_index_;
  std::unordered_map<std::string, FileId> file_index_;
  std::unordered_map<std::string, ModuleId> module_index_;
  std::unordered_map<uint64_t, LineId> line_index_;
  std::vector<FunctionId> arena_;
  std::vector<FrameInfo> frame_info_;                                 // parallel to arena_
  std::unordered_map<uint64_t, Frames> caller_frames_, leaf_frames_;  // by address
  // The one line of a named frame without a file (an XSUB, a slow op timed as a sub): its
  // count is its function's calls, when those are exact.
  std::vector<std::pair<LineId, FunctionId>> fileless_lines_;
  NodeFrames chains_[kChainModes];  // the callers' part of a stack, by its innermost node
  std::vector<std::pair<uint64_t, uint64_t>> chain_scratch_;  // (node, address), innermost first
  std::unordered_map<uint32_t, FrameId> pseudo_roots_;        // by FunctionId
  std::unordered_map<uint32_t, SampleStack> pseudo_stacks_;   // by FunctionId
  std::unordered_map<ChainKey, SampleStack, ChainKeyHash> stacks_;  // by (leaf node, mode)
  std::optional<SampleStack> profiler_stack_;
  std::optional<SampleStack> unsampled_stack_;
  std::unordered_map<uint64_t, ThreadCursor> threads_;
  std::unordered_map<uint64_t, bool> runtime_threads_;
  bool period_assumed_ = false;
  // Samples whose time cannot be true (weight × period, or the run's total, beyond the format's
  // bounds): the reader drops them as malformed; a RawProfile made otherwise may still hold them.
  uint64_t samples_beyond_bounds_ = 0;
  // The stack times of one stack, newest first: the head's index by StackId, then each entry's
  // next. Most stacks run on one thread, so the search is a vector lookup, not a hash.
  std::vector<uint32_t> stack_time_head_;
  std::vector<uint32_t> stack_time_next_;
  // Times at which sampling switched, ascending, and whether it was on before the first.
  std::vector<std::pair<uint64_t, bool>> switches_;
  size_t switches_from_ = ~size_t(0);  // raw.states.size() when switches_ was made
};

FileId ProfileBuilder::file(const std::string& path, PseudoKind pseudo) {
  auto [it, inserted] = file_index_.try_emplace(path, FileId(profile_.files.size()));
  if (inserted) profile_.files.push_back(File{path, pseudo, 0, 0, 0});
  return it->second;
}

LineId ProfileBuilder::line(FileId file, uint32_t line) {
  uint64_t key = (uint64_t{file.index()} << 32) | line;
  auto [it, inserted] = line_index_.try_emplace(key, LineId(profile_.lines.size()));
  if (inserted) profile_.lines.push_back(Line{file, line, 0, 0, 0});
  return it->second;
}

ModuleId ProfileBuilder::module(const format::RawModule& raw) {
  // One module per (path, build-id): reloading a library does not make it a second module.
  std::string key = raw.path;
  key.push_back('\0');
  key += raw.build_id;
  auto [it, inserted] = module_index_.try_emplace(key, ModuleId(profile_.modules.size()));
  if (inserted) {
    Module m;
    m.path = raw.path;
    m.name = baseName(raw.path);
    m.build_id = raw.build_id;
    m.bias = raw.bias;
    m.start = raw.start;
    m.size = raw.size;
    m.file_offset = raw.file_offset;
    profile_.modules.push_back(std::move(m));
  }
  return it->second;
}

ModuleId ProfileBuilder::pseudoModule(PseudoKind kind, const std::string& name) {
  std::string key = "\1" + name;  // cannot collide with a path + '\0' + build-id
  auto [it, inserted] = module_index_.try_emplace(key, ModuleId(profile_.modules.size()));
  if (inserted) {
    Module m;
    m.path = name;
    m.name = name;
    m.pseudo = kind;
    profile_.modules.push_back(std::move(m));
  }
  return it->second;
}

FunctionId ProfileBuilder::function(const std::string& name, const std::string& decl_file,
                                    uint32_t decl_line, ModuleId module) {
  std::string key = name;
  key.push_back('\0');
  key += decl_file;
  key.push_back('\0');
  key += std::to_string(decl_line);
  // Without a definition site, the module is what keeps two static functions of one name in
  // two libraries apart.
  if (decl_file.empty()) {
    key.push_back('\0');
    key += std::to_string(module.index());
  }
  auto [it, inserted] = function_index_.try_emplace(key, FunctionId(profile_.functions.size()));
  if (inserted) {
    Function f;
    f.name = name;
    if (!decl_file.empty()) f.file = file(decl_file, PseudoKind::kNone);
    f.line = decl_line;
    f.module = module;
    profile_.functions.push_back(std::move(f));
  }
  return it->second;
}

FunctionId ProfileBuilder::pseudoFunction(PseudoKind kind, const std::string& name,
                                          ModuleId module) {
  std::string key = "\1" + name;
  key.push_back('\0');
  key += std::to_string(module.index());
  auto [it, inserted] = function_index_.try_emplace(key, FunctionId(profile_.functions.size()));
  if (inserted) {
    Function f;
    f.name = name;
    f.file = file(name, kind);
    f.module = module;
    f.pseudo = kind;
    profile_.functions.push_back(std::move(f));
  }
  return it->second;
}

ProfileBuilder::Frames ProfileBuilder::single(FunctionId fn, uint64_t address) {
  Frames frames;
  frames.offset = static_cast<uint32_t>(arena_.size());
  frames.count = 1;
  arena_.push_back(fn);
  const Function& f = profile_.functions[fn.index()];
  frames.line = line(f.file, 0);
  frames.module = f.module;
  frame_info_.push_back(FrameInfo{frames.line, address});
  return frames;
}

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
  if (inserted)
    it->second = frame(FrameId(), fn, line(profile_.functions[fn.index()].file, 0), 0);
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

void ProfileBuilder::addStackTime(StackId stack, uint32_t thread_index, uint64_t ns,
                                  uint64_t samples) {
  constexpr uint32_t kNone = ~0u;
  if (stack_time_head_.size() <= stack.index()) stack_time_head_.resize(stack.index() + 1, kNone);
  uint32_t at = stack_time_head_[stack.index()];
  while (at != kNone && profile_.stack_times[at].thread != thread_index) at = stack_time_next_[at];
  if (at == kNone) {
    at = static_cast<uint32_t>(profile_.stack_times.size());
    profile_.stack_times.push_back(StackTime{stack, thread_index, 0, 0});
    stack_time_next_.push_back(stack_time_head_[stack.index()]);
    stack_time_head_[stack.index()] = at;
  }
  StackTime& t = profile_.stack_times[at];
  t.ns += ns;
  t.samples += samples;
}

void ProfileBuilder::addLineTimes() {
  // A line (or a function's line) on the stack twice, in a recursion, counts once per sample:
  // a stack's time goes to the line of each of its frames that has no frame of the same line
  // outside it. So, over the trie: each frame whose line is on none of its callers gets the time
  // of all the stacks through it; found in one walk down the trie, counting the frames of each
  // line on the way.
  const std::vector<StackFrame>& frames = profile_.stack_frames;
  size_t n = frames.size();
  std::vector<uint64_t> through(n, 0);  // the time of the stacks that end at or under a frame
  std::vector<uint8_t> timed(n, 0);     // whether any stack with a time ends at or under it
  for (const StackTime& t : profile_.stack_times) {
    FrameId leaf = profile_.stacks[t.stack.index()].leaf;
    if (!leaf.valid()) continue;
    through[leaf.index()] += t.ns;
    timed[leaf.index()] = 1;
  }
  for (size_t i = n; i-- > 0;) {
    FrameId caller = frames[i].caller;
    if (!caller.valid()) continue;
    through[caller.index()] += through[i];
    timed[caller.index()] |= timed[i];
  }
  // The function-line row of each frame with a time.
  std::unordered_map<uint64_t, uint32_t> function_line;  // function << 32 | line → index
  std::vector<uint32_t> row(n, ~0u);
  for (size_t i = 0; i < n; ++i) {
    if (!timed[i]) continue;
    uint64_t key = (uint64_t{frames[i].function.index()} << 32) | frames[i].line.index();
    auto [it, added] = function_line.try_emplace(key, profile_.function_lines.size());
    if (added) profile_.function_lines.push_back(FunctionLine{frames[i].function, frames[i].line});
    row[i] = it->second;
  }
  for (const StackTime& t : profile_.stack_times) {
    FrameId leaf = profile_.stacks[t.stack.index()].leaf;
    if (leaf.valid()) profile_.function_lines[row[leaf.index()]].self_ns += t.ns;
  }
  // Children of each frame, by counting sort on the caller (index n: the outermost frames).
  std::vector<uint32_t> first_child(n + 2, 0), children(n);
  for (size_t i = 0; i < n; ++i)
    ++first_child[(frames[i].caller.valid() ? frames[i].caller.index() : n) + 1];
  for (size_t i = 1; i < n + 2; ++i) first_child[i] += first_child[i - 1];
  std::vector<uint32_t> next(first_child.begin(), first_child.end() - 1);
  for (size_t i = 0; i < n; ++i)
    children[next[frames[i].caller.valid() ? frames[i].caller.index() : n]++] =
        static_cast<uint32_t>(i);
  std::vector<uint32_t> line_open(profile_.lines.size(), 0);
  std::vector<uint32_t> row_open(profile_.function_lines.size(), 0);
  // Depth-first, without recursion: (frame, its next child to visit) per level.
  std::vector<std::pair<uint32_t, uint32_t>> walk;
  walk.emplace_back(static_cast<uint32_t>(n), first_child[n]);
  while (!walk.empty()) {
    auto& [at, child] = walk.back();
    if (child == first_child[at + 1]) {
      if (at != n) {
        --line_open[frames[at].line.index()];
        if (row[at] != ~0u) --row_open[row[at]];
      }
      walk.pop_back();
      continue;
    }
    uint32_t f = children[child++];
    if (!timed[f]) continue;
    if (line_open[frames[f].line.index()]++ == 0)
      profile_.lines[frames[f].line.index()].inclusive_ns += through[f];
    if (row_open[row[f]]++ == 0) profile_.function_lines[row[f]].inclusive_ns += through[f];
    walk.emplace_back(f, first_child[f]);
  }
}

const ProfileBuilder::Frames& ProfileBuilder::expand(const format::RawProfile& raw,
                                                     uint64_t address, bool is_return,
                                                     uint64_t time) {
  auto& cache = is_return ? caller_frames_ : leaf_frames_;
  auto found = cache.find(address);
  if (found != cache.end()) return found->second;

  Frames frames;
  if (format::IsNamedFrame(address)) {
    frames = named(raw, address);
  } else if (address >= kKernelSpaceStart) {
    frames = single(pseudoFunction(PseudoKind::kKernel, "[kernel]",
                                   pseudoModule(PseudoKind::kKernel, "[kernel]")),
                    address);
  } else if (const format::RawModule* raw_module = raw.moduleAt(address, time); !raw_module) {
    frames = single(pseudoFunction(PseudoKind::kUnknown, "[unknown]",
                                   pseudoModule(PseudoKind::kUnknown, "[unknown]")),
                    address);
  } else if (IsRuntimeModule(raw_module->path)) {
    // hotline's own code (the tracing hooks, the heap shims): the profiler's time, under the
    // function that called into it.
    frames = single(pseudoFunction(PseudoKind::kProfiler, "[profiler]",
                                   pseudoModule(PseudoKind::kProfiler, "[profiler]")),
                    address);
  } else {
    ModuleId mod = module(*raw_module);
    symbolize::ModuleInfo info{raw_module->path, raw_module->build_id, raw_module->bias};
    const symbolize::ResolvedAddress& resolved = resolver_.resolve(info, address, is_return);
    // Kernel-made mappings are already bracketed: `[vdso]`, not `[[vdso]]`.
    const std::string& module_name = profile_.modules[mod.index()].name;
    const std::string module_label =
        module_name.starts_with('[') ? module_name : "[" + module_name + "]";
    if (resolved.frames.empty() || resolved.frames.back().function.empty()) {
      frames = single(pseudoFunction(PseudoKind::kModule, module_label, mod), address);
    } else {
      auto line_of = [&](const symbolize::ResolvedFrame& f) {
        return f.file.empty() ? line(file(module_label, PseudoKind::kModule), 0)
                              : line(file(f.file, PseudoKind::kNone), f.line);
      };
      frames.offset = static_cast<uint32_t>(arena_.size());
      // The symbolizer lists the inline chain innermost first; stacks go outermost first. An
      // inlined level without a name cannot be told apart from its caller: it is left out.
      // In a library of the system the chain is the library's business: its time is the
      // out-of-line function's (sin's body is __sin_fma, not the rounding-mode helper inlined
      // into it), at that function's own line, as perf and gprof name it.
      const bool whole_chain = !IsSystemModule(raw_module->path);
      for (auto it = resolved.frames.rbegin(); it != resolved.frames.rend(); ++it) {
        if (it->function.empty()) continue;
        arena_.push_back(function(it->function, it->decl_file, it->decl_line, mod));
        frame_info_.push_back(FrameInfo{line_of(*it), address});
        if (!whole_chain) break;
      }
      frames.count = static_cast<uint32_t>(arena_.size() - frames.offset);
      frames.line = whole_chain || frames.count == 0 ? line_of(resolved.frames.front())
                                                     : frame_info_.back().line;
      frames.module = mod;
    }
  }
  return cache.emplace(address, frames).first->second;
}

ProfileBuilder::Frames ProfileBuilder::named(const format::RawProfile& raw, uint64_t address) {
  auto found = raw.frames.find(format::NamedFrameId(address));
  if (found == raw.frames.end())
    return single(pseudoFunction(PseudoKind::kUnknown, "[unknown]",
                                 pseudoModule(PseudoKind::kUnknown, "[unknown]")),
                  address);
  const format::RawFrame& f = found->second;
  profile_.summary.interpreted = true;
  // The frame's module is a name ("perl", a .pm's path), not a mapped file: no symbols to read.
  format::RawModule named_module;
  named_module.path = f.module.empty() ? "[interpreted]" : f.module;
  ModuleId mod = module(named_module);
  Frames frames;
  frames.offset = static_cast<uint32_t>(arena_.size());
  frames.count = 1;
  frames.module = mod;
  frames.line = f.file.empty() ? line(file("[" + f.name + "]", PseudoKind::kModule), 0)
                               : line(file(f.file, PseudoKind::kNone), uint32_t(f.line));
  arena_.push_back(function(f.name, f.def_file, uint32_t(f.def_line), mod));
  if (f.file.empty()) fileless_lines_.emplace_back(frames.line, arena_.back());
  frame_info_.push_back(FrameInfo{frames.line, 0});
  return frames;
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
  for (uint64_t at = node;;) {
    if (at == 0) break;
    if (const FrameId* done = chains_[mode].find(at)) {
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
    const Frames& frames =
        expand(raw, chain_scratch_[k].second, !(mode & kChainShadow), time);
    // A runtime frame between two of the program's is a pass-through shim (a sleep, the thread
    // trampoline, an allocator wrapper): not a frame of the program. Only code that runs in the
    // runtime itself, innermost, is the profiler's time.
    if (!(frames.count == 1 &&
          profile_.functions[arena_[frames.offset].index()].pseudo == PseudoKind::kProfiler))
      top = enter(top, frames);
    chains_[mode].set(chain_scratch_[k].first, top, raw.stack_nodes.size());
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
  uint32_t mode = (cut ? kChainCut : flagged_broken ? kChainBroken : 0) |
                  (shadow ? kChainShadow : 0);
  ChainKey key{sample.node, mode};
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

ProfileBuilder::ThreadCursor& ProfileBuilder::thread(uint64_t tid) {
  auto [it, inserted] = threads_.try_emplace(tid);
  if (inserted) {
    it->second.index = static_cast<uint32_t>(profile_.threads.size());
    it->second.path.emplace(profile_.stack_frames);
    Thread t;
    t.tid = tid;
    profile_.threads.push_back(std::move(t));
  }
  return it->second;
}

uint64_t ProfileBuilder::period(const format::RawProfile& raw) {
  // The reader bounds each sample's time by the same rule (format::kMaxSampleNs).
  if (raw.process && raw.process->period_ns > 0) {
    profile_.summary.period_ns = raw.process->period_ns;
  } else {
    if (!period_assumed_)
      profile_.warnings.push_back(
          "the process record (which holds the sampling period) is missing: assuming 1 ms per "
          "sample");
    period_assumed_ = true;
    profile_.summary.period_ns = kAssumedPeriodNs;
  }
  return profile_.summary.period_ns;
}

bool ProfileBuilder::switchedOff(const format::RawProfile& raw, uint64_t time) {
  if (!raw.process || raw.process->sampler != format::Sampler::kKernelRecorder) return false;
  bool on_at_start = !(raw.process->flags & format::kStartedPaused);
  if (raw.states.empty()) return !on_at_start;
  if (switches_from_ != raw.states.size()) {
    switches_.clear();
    for (const format::StateRecord& st : raw.states) switches_.emplace_back(st.time, st.on != 0);
    std::stable_sort(switches_.begin(), switches_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    switches_from_ = raw.states.size();
  }
  auto after = std::upper_bound(switches_.begin(), switches_.end(), time,
                                [](uint64_t t, const auto& s) { return t < s.first; });
  return after == switches_.begin() ? !on_at_start : !std::prev(after)->second;
}

void ProfileBuilder::addSample(const format::RawProfile& raw, const format::SampleRecord& sample) {
  if (options_.thread && sample.tid != *options_.thread) return;
  if (switchedOff(raw, sample.time)) {
    ++profile_.summary.samples_switched_off;
    return;
  }
  uint64_t weight = std::max<uint64_t>(sample.weight, 1);
  uint64_t ns;
  if (__builtin_mul_overflow(weight, period(raw), &ns) || ns > format::kMaxSampleNs ||
      profile_.summary.sampled_ns + ns > format::kMaxRunSampleNs) {
    ++samples_beyond_bounds_;
    return;
  }
  SampleStack frames = stack(raw, sample);  // a copy: the caches may grow below
  ThreadCursor& cursor = thread(sample.tid);
  size_t same = cursor.path->moveTo(frames.leaf);
  std::span<const FunctionId> functions = cursor.path->functions();
  StackChange change = graph_.onSample(sample.tid, functions, ns, same);

  Line& line = profile_.lines[frames.line.index()];
  line.time_ns += ns;
  ++line.samples;
  if (cursor.last_line != frames.line) {
    ++line.count;
    cursor.last_line = frames.line;
  }
  addStackTime(frames.stack, cursor.index, ns, 1);
  FunctionId leaf = functions.back();
  ++profile_.functions[leaf.index()].samples;
  Module& mod = profile_.modules[frames.module.index()];
  mod.self_ns += ns;
  ++mod.samples;
  Thread& thread = profile_.threads[cursor.index];
  thread.time_ns += ns;
  ++thread.samples;

  Summary& summary = profile_.summary;
  if (summary.samples == 0 || sample.time < summary.first_time) summary.first_time = sample.time;
  summary.last_time = std::max(summary.last_time, sample.time);
  ++summary.samples;
  summary.weighted_samples += weight;
  if (sample.flags & format::kSampleTruncated) ++summary.truncated_samples;
  if (sample.flags & format::kSampleBroken) ++summary.broken_samples;
  summary.sampled_ns += ns;
  PseudoKind leaf_kind = profile_.functions[leaf.index()].pseudo;
  if (leaf_kind == PseudoKind::kProfiler) ++summary.profiler_samples;
  if (leaf_kind == PseudoKind::kUnknown) ++summary.unknown_samples;

  if (options_.keep_samples) {
    Sample kept;
    kept.tid = sample.tid;
    kept.time = sample.time;
    kept.ns = ns;
    kept.leaf = leaf;
    kept.line = frames.line;
    kept.stack = frames.stack;
    kept.depth = static_cast<uint32_t>(functions.size());
    kept.flags = static_cast<uint32_t>(sample.flags);
    kept.popped = change.popped;
    kept.pushed.assign(functions.begin() + change.common, functions.end());
    if (auto node = raw.stack_nodes.find(sample.node); node != raw.stack_nodes.end()) {
      kept.address = node->second.address;
      if (const format::RawModule* m = raw.moduleAt(kept.address, sample.time))
        kept.module_address = kept.address - m->bias;
    }
    profile_.samples.push_back(std::move(kept));
  }
}

Expected<Profile> ProfileBuilder::finish(const format::RawProfile& raw) {
  constexpr size_t kMaxIds = std::numeric_limits<uint32_t>::max() - 1;
  if (profile_.functions.size() > kMaxIds || profile_.lines.size() > kMaxIds ||
      arena_.size() > kMaxIds || profile_.stack_frames.size() > kMaxIds)
    return Status::Error("the profile is too large: more than 2^32 functions, lines or frames");

  accountUnsampled(raw);
  profile_.summary.watched = !raw.watches.empty();
  // Every module the program mapped, sampled or not: exports map addresses through them.
  for (const format::RawModule& m : raw.modules)
    if (!IsRuntimeModule(m.path)) module(m);
  graph_.finish();
  Profile& p = profile_;
  const auto& totals = graph_.functions();
  for (size_t i = 0; i < totals.size() && i < p.functions.size(); ++i) {
    p.functions[i].self_ns = totals[i].self_ns;
    p.functions[i].inclusive_ns = totals[i].inclusive_ns;
    p.functions[i].calls = totals[i].calls;
  }
  p.callees.assign(p.functions.size(), {});
  for (const EdgeTotals& e : graph_.edges())
    p.callees[e.parent.index()].push_back(CallEdge{e.child, e.time_ns, e.loop_ns, e.calls});
  // Exact calls (and, timed, exact times) from tracing replace the estimates.
  ApplyTrace(
      raw,
      [&](uint64_t address) {
        const Frames& frames = expand(raw, address, false, raw.process ? raw.process->time : 0);
        return frames.count ? arena_[frames.offset] : FunctionId();
      },
      [&](uint64_t return_address) {
        const Frames& frames =
            expand(raw, return_address, true, raw.process ? raw.process->time : 0);
        return std::vector<FunctionId>(arena_.begin() + frames.offset,
                                       arena_.begin() + frames.offset + frames.count);
      },
      p, options_.thread, options_.keep_calls);
  p.callees.resize(p.functions.size());
  // gcov's exact counts (record appended them for --coverage builds) replace the estimates.
  for (const format::RawLineCounts& counts : raw.line_counts) {
    FileId f = file(counts.file, PseudoKind::kNone);
    for (const auto& [number, executions] : counts.lines) {
      Line& l = p.lines[line(f, static_cast<uint32_t>(number)).index()];
      l.count = executions;
      l.count_exact = true;
    }
    p.summary.exact_line_counts = true;
  }
  for (auto [line_id, fn] : fileless_lines_) {
    const Function& called = p.functions[fn.index()];
    if (!called.calls_exact) continue;
    Line& l = p.lines[line_id.index()];
    l.count = called.calls;
    l.count_exact = true;
  }
  // gcov's function counts are exact calls, and its ranges let a function's lines be summed
  // (complexity's lines/run). A function no sample or trace saw is added, so the listing can
  // show it (with no time); a traced function keeps the trace's calls, which are the same.
  for (const format::RawFunctionCount& f : raw.function_counts) {
    ModuleId mod;
    for (const format::RawModule& m : raw.modules)
      if (!mod.valid() && m.path == f.file) mod = module(m);
    if (!mod.valid()) {
      for (const format::RawLineCounts& counts : raw.line_counts)
        for (const format::RawModule& m : raw.modules)
          if (!mod.valid() && counts.file == f.file && m.path == counts.module) mod = module(m);
    }
    if (!mod.valid()) mod = pseudoModule(PseudoKind::kModule, "[coverage]");
    FunctionId id = function(f.name, f.file, static_cast<uint32_t>(f.start_line), mod);
    Function& fn = p.functions[id.index()];
    fn.end_line = static_cast<uint32_t>(f.end_line);
    if (p.summary.traced && fn.calls_exact) continue;
    fn.calls = f.executions;
    fn.calls_exact = true;
  }
  p.callees.resize(p.functions.size());
  addLineTimes();
  PutInOrder(p);

  for (const Line& l : p.lines) {
    File& f = p.files[l.file.index()];
    f.time_ns += l.time_ns;
    f.count += l.count;
    if (l.samples) ++f.lines_hit;
  }

  // Thread names and CPU times from the thread records; threads without samples are listed
  // too (with no time), unless the profile is restricted to one thread.
  for (const format::RawThread& t : raw.threads) {
    if (options_.thread && t.tid != *options_.thread) continue;
    Thread& thread = p.threads[this->thread(t.tid).index];
    if (!t.name.empty()) thread.name = t.name;
    if (t.cpu_ns) thread.cpu_ns = t.cpu_ns;
  }
  p.only_thread = options_.thread;

  Summary& s = p.summary;
  s.total_ns = graph_.total_ns();
  s.max_depth = graph_.max_depth();
  for (const File& f : p.files) s.files += f.time_ns > 0 ? 1 : 0;
  for (const Function& f : p.functions) s.functions += f.self_ns > 0 || f.inclusive_ns > 0 ? 1 : 0;
  if (raw.process) {
    s.start_time = raw.process->time;
    s.start_realtime_ns = raw.process->realtime_ns;
    s.clock = raw.process->clock;
    s.sampler = raw.process->sampler;
    s.exe = raw.process->exe;
    s.argv = raw.process->argv;
    if (s.period_ns == 0) s.period_ns = raw.process->period_ns;
  }
  for (const format::SizeRecord& r : raw.sizes)
    if (r.function == 0) s.run_size = r.n;
  for (const format::RawMark& m : raw.marks)
    if (!options_.thread || m.tid == *options_.thread)
      p.marks.push_back(Mark{m.time, m.tid, m.label});
  for (const format::StateRecord& st : raw.states)
    if (!options_.thread || st.tid == *options_.thread)
      p.states.push_back(
          StateChange{st.time, st.tid, st.on != 0, static_cast<uint32_t>(st.source)});
  s.end = raw.end;
  p.runtime_stats = raw.stats;
  p.disabled_reasons = raw.disabled_reasons;
  p.notes = raw.notes;
  p.sources = raw.sources;
  for (const format::RawTexCommand& c : raw.tex_commands)
    p.tex_commands.push_back(TexCommand{c.code, c.name, c.slots, c.cost});
  SortTexCommands(p.tex_commands);
  for (std::string& w : resolver_.warnings()) p.warnings.push_back(std::move(w));
  if (samples_beyond_bounds_)
    p.warnings.push_back(std::to_string(samples_beyond_bounds_) +
                         " samples standing for more time than a run can have were left out");
  if (raw.dangling_references)
    p.warnings.push_back(std::to_string(raw.dangling_references) +
                         " references to records that were lost are shown as [unknown]");
  // Stacks cut short are shown, never hidden: above 1% of the samples, said up front.
  auto share = [&](uint64_t n) { return s.samples ? 100.0 * double(n) / double(s.samples) : 0.0; };
  auto warn_above_one_percent = [&](uint64_t n, const char* stacks) {
    if (share(n) <= 1) return;
    char line[256];
    std::snprintf(line, sizeof line, "%.1f%% of the samples have stacks %s", share(n), stacks);
    p.warnings.push_back(line);
  };
  warn_above_one_percent(s.truncated_samples,
                         "deeper than was recorded (the stack copy, or --max-depth): their outer "
                         "frames are under [truncated]");
  warn_above_one_percent(s.broken_samples,
                         "that stop at a frame without unwind information: their callers are "
                         "under [broken stack]");
  return std::move(profile_);
}

void ProfileBuilder::accountUnsampled(const format::RawProfile& raw) {
  Summary& s = profile_.summary;
  // Wall-clock samples measure elapsed time, and a run whose sampling was switched off has CPU
  // time no sample was meant to see: neither compares with CPU time.
  bool paused = std::any_of(raw.states.begin(), raw.states.end(),
                            [](const format::StateRecord& st) { return st.on == 0; });
  if (!raw.process || raw.process->clock != format::ClockMode::kCpu ||
      raw.process->period_ns == 0 || raw.process->sampler == format::Sampler::kNone || paused)
    return;
  s.cpu_compared = true;
  FunctionId unsampled;
  struct Loss {
    uint64_t ns;
    std::string text;
  };
  std::vector<Loss> losses;
  for (const format::RawThread& t : raw.threads) {
    if (options_.thread && t.tid != *options_.thread) continue;
    ThreadCursor& cursor = thread(t.tid);
    if (!t.cpu_ns) {
      ++s.threads_cpu_unknown;
      continue;
    }
    s.cpu_ns += *t.cpu_ns;
    Thread& th = profile_.threads[cursor.index];
    if (*t.cpu_ns <= th.time_ns) continue;
    uint64_t ns = *t.cpu_ns - th.time_ns;
    if (!unsampled.valid())
      unsampled = pseudoFunction(PseudoKind::kUnsampled, kUnsampledName,
                                 pseudoModule(PseudoKind::kUnsampled, kUnsampledName));
    if (!unsampled_stack_) unsampled_stack_ = pseudoStack(unsampled);
    size_t same = cursor.path->moveTo(unsampled_stack_->leaf);
    graph_.onSample(t.tid, cursor.path->functions(), ns, same);
    addStackTime(unsampled_stack_->stack, cursor.index, ns, 0);
    const Function& fn = profile_.functions[unsampled.index()];
    profile_.lines[line(fn.file, 0).index()].time_ns += ns;
    profile_.modules[fn.module.index()].self_ns += ns;
    th.unsampled_ns = ns;
    th.time_ns += ns;
    s.unsampled_ns += ns;
    std::string name = t.name.empty() ? "" : " (" + t.name + ")";
    losses.push_back(
        Loss{ns, std::to_string(t.tid) + name + " " + FormatMs(ns) + " of " + FormatMs(*t.cpu_ns)});
  }
  // Every thread loses a little (its last partial period, its start before the timer): say so
  // only when it adds up to more than 5% or 10 ms, and name the threads that lost most.
  if (s.unsampled_ns * 20 <= s.cpu_ns && s.unsampled_ns <= 10'000'000) return;
  std::sort(losses.begin(), losses.end(), [](const Loss& a, const Loss& b) { return a.ns > b.ns; });
  std::string text = FormatMs(s.unsampled_ns) + " of the threads' " + FormatMs(s.cpu_ns) +
                     " of CPU time has no sample and is shown as [unsampled]; most in thread" +
                     (losses.size() == 1 ? " " : "s ");
  for (size_t i = 0; i < losses.size() && i < 5; ++i) text += (i ? ", " : "") + losses[i].text;
  if (losses.size() > 5) text += ", and " + std::to_string(losses.size() - 5) + " more";
  profile_.warnings.push_back(text);
}

}  // namespace

Expected<Profile> BuildProfile(const format::RawProfile& raw, AddressResolver& resolver,
                               const BuildOptions& options) {
  ProfileBuilder builder(resolver, options);
  for (const format::SampleRecord& sample : raw.samples) builder.addSample(raw, sample);
  return builder.finish(raw);
}

class ProfileStream::Builder : public ProfileBuilder {
 public:
  using ProfileBuilder::ProfileBuilder;
};

ProfileStream::ProfileStream(AddressResolver& resolver, std::optional<BuildOptions> options)
    : format::RawProfile(false),
      builder_(options ? std::make_unique<Builder>(resolver, *options) : nullptr) {}

ProfileStream::~ProfileStream() = default;

void ProfileStream::onSample(const format::SampleRecord& r) {
  if (builder_) builder_->addSample(*this, r);
}

Expected<Profile> ProfileStream::finishProfile() { return builder_->finish(*this); }

Expected<Profile> LoadProfile(const std::string& path, AddressResolver& resolver,
                              const BuildOptions& options, format::ReadStats* stats) {
  // A file of several runs (hotline merge): each run built on its own, then added up.
  std::vector<Profile> runs;
  format::ReadStats all;
  for (uint64_t offset = 0;;) {
    ProfileStream raw(resolver, options);
    format::ReadStats run;
    Status status = format::ReadProfileFile(path, raw, &run, offset);
    if (!status.ok()) return status;
    Expected<Profile> profile = raw.finishProfile();
    if (!profile) return profile;
    runs.push_back(std::move(*profile));
    if (offset == 0) {
      all = run;
    } else {
      all.add(run);
    }
    offset = run.next_run;
    if (offset == 0) break;
  }
  all.next_run = 0;
  if (stats) *stats = all;
  if (runs.size() == 1) return std::move(runs.front());
  std::vector<const Profile*> pointers;
  for (const Profile& run : runs) pointers.push_back(&run);
  MergeOptions merge;
  merge.force = true;  // hotline merge asked whether runs of different programs may be one
  return MergeProfiles(pointers, merge);
}

}  // namespace hotline::model

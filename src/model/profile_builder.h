// ProfileBuilder: the state of building one run's Profile from its records, and the steps that
// build it, one file for each part of the work (README.md). Internal to src/model: BuildProfile,
// LoadProfile and ProfileStream (build.h) are its interface.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "format/schema.h"
#include "model/build.h"
#include "model/call_graph.h"
#include "model/stack_path.h"

namespace hotline::model {

inline std::string baseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// hotline's own runtime, injected into the program: what runs in it is the profiler's time.
inline bool IsRuntimeModule(const std::string& path) {
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
    uint32_t index = 0;             // into profile_.threads
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
  // An address means the image mapped there at that time. Each time an image is mapped over
  // the range of another (dlclose, then dlopen of another library) a new epoch begins, and
  // what is cached by address or by stack node is cached per epoch; epoch 0 uses the members
  // above, later ones these. Almost every profile has epoch 0 only.
  std::optional<std::vector<uint64_t>> reuse_times_;  // the start of each later epoch, sorted
  std::map<std::pair<uint32_t, bool>, std::unordered_map<uint64_t, Frames>> later_frames_;
  std::map<std::pair<uint32_t, uint32_t>, NodeFrames> later_chains_;  // by (epoch, mode)
  uint32_t epochAt(const format::RawProfile& raw, uint64_t time);
  NodeFrames& chainsAt(uint32_t epoch, uint32_t mode) {
    return epoch == 0 ? chains_[mode] : later_chains_[{epoch, mode}];
  }
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

}  // namespace hotline::model

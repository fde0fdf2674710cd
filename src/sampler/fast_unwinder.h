// The recorder's quick path through a sample's stack copy: each file of the program is mapped
// here as the loader maps it (its segments at their virtual addresses, read-only), its .eh_frame
// rules are decoded once per address through src/unwind and cached, and a frame then costs a
// table probe and a word or two read from the copy. Frames whose rules are not the common x86-64
// kind (a signal frame, a PLT stub, a CFA from an expression) and files without .eh_frame_hdr
// are left to elfutils (stack_unwinder.h), which walks the whole sample again. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "sampler/perf_recorder.h"
#include "unwind/eh_frame.h"

namespace hotline::sampler {

struct UnwoundStack;

class FastUnwinder {
 public:
  FastUnwinder();
  ~FastUnwinder();
  FastUnwinder(const FastUnwinder&) = delete;
  FastUnwinder& operator=(const FastUnwinder&) = delete;

  // The records that change a process's address space, as PerfRecorder reports them.
  void onMapping(const PerfMapping& mapping, const std::string& file);
  void onFork(uint32_t parent, uint32_t child);
  void onExec(uint32_t pid);

  enum class Result { kDone, kGaveUp };
  // Walks `sample`'s stack into `out` (frames, truncated/past_copy). kGaveUp: a frame the quick
  // path does not know; `out` is then to be filled by elfutils.
  Result unwind(const PerfSample& sample, uint32_t max_depth, UnwoundStack* out);

  // The `size` bytes of code at `address` of process `pid`, from the files mapped here; false
  // when no file known here holds them.
  bool readCode(uint32_t pid, uint64_t address, void* out, uint64_t size) const;

  uint64_t quick() const { return quick_; }
  uint64_t gave_up() const { return gave_up_; }

 private:
  struct File;
  struct Mapping {
    uint64_t start = 0, end = 0;  // where the file's code lies in the sampled process
    int64_t shift = 0;            // here = there + shift
    const File* file = nullptr;
  };
  struct Process {
    std::vector<Mapping> mappings;  // sorted by start
  };
  const File* fileFor(const std::string& path);
  const Mapping* mappingAt(const Process& p, uint64_t pc) const;
  const unwind::StepRule& ruleFor(const File& file, uint64_t pc_here);

  std::map<std::string, std::unique_ptr<File>> files_;
  std::map<uint32_t, Process> processes_;
  // The rules found, by the first address of the table row each holds for (here); no two rows
  // overlap (one image's FDEs do not).
  struct CachedRule {
    uint64_t end;
    unwind::StepRule rule;
  };
  std::map<uint64_t, CachedRule> rules_;
  // The rules last used, by a hash of their address: one cache line to read where the map's
  // lookup is a division and a chain of nodes (a deep stack asks for a rule per frame).
  static constexpr int kRecentRuleBits = 13;
  std::vector<unwind::StepRule> recent_rules_ =
      std::vector<unwind::StepRule>(size_t{1} << kRecentRuleBits);
  uint64_t quick_ = 0, gave_up_ = 0;
};

}  // namespace hotline::sampler

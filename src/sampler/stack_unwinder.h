// Unwinds the user stacks the kernel copies into samples (perf_recorder.h), after the fact and
// outside the sampled program, with DWARF CFI (.eh_frame, and .debug_frame where that is all a
// module has) through elfutils' unwinder. It keeps, per process, the executable mappings the
// samples reported (a forked child starts with its parent's, exec starts afresh) and reads memory
// only from the sample's stack copy. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sampler/fast_unwinder.h"
#include "sampler/perf_recorder.h"

namespace hotline::sampler {

struct UnwoundStack {
  std::vector<uint64_t> frames;  // innermost first: the sampled pc, then return addresses
  // The stack goes on beyond these frames: stopped at the maximum depth, or (past_copy) at the
  // end of the stack the kernel copied.
  bool truncated = false;
  bool past_copy = false;
  // The walk did not end where the unwind information ends the stack: a frame without CFI, a
  // bad frame, a pc in no known mapping. What elfutils said, when it said something.
  bool incomplete = false;
  std::string why;
};

class StackUnwinder {
 public:
  StackUnwinder();
  ~StackUnwinder();
  StackUnwinder(const StackUnwinder&) = delete;
  StackUnwinder& operator=(const StackUnwinder&) = delete;

  // The records that change a process's address space, as PerfRecorder reports them.
  void onMapping(const PerfMapping& mapping);
  void onTask(const PerfTask& task);
  void onComm(const PerfComm& comm);

  // Unwinds `sample` (a user-mode sample with registers) up to `max_depth` frames: the quick
  // path (fast_unwinder.h) where it knows every frame, elfutils where it does not.
  UnwoundStack unwind(const PerfSample& sample, uint32_t max_depth);

  // Samples the quick path unwound, and those it left to elfutils.
  uint64_t quick() const { return fast_.quick(); }
  uint64_t slow() const { return fast_.gave_up(); }
  // elfutils alone: what the quick path must give wherever it gives anything (its tests).
  UnwoundStack unwindWithElfutils(const PerfSample& sample, uint32_t max_depth);

 private:
  bool SystemCallWithoutCfi(const PerfSample& sample, uint64_t* ra) const;
  struct Process;
  Process* process(uint32_t pid);
  std::map<uint32_t, std::unique_ptr<Process>> processes_;
  FastUnwinder fast_;
};

}  // namespace hotline::sampler

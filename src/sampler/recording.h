// What `hotline record --sampler kernel` does while the program runs: samples it from outside
// (PerfRecorder), unwinds each sample (StackUnwinder), and writes modules and samples as a
// stream of chunks that `record` appends to the process's profile after the runtime's records
// (ids from format::kAppendedIdBase, docs/format.md). Samples of the program's forked children
// are counted, not written: their profiles are their own (not yet done).
#pragma once

#include <sys/types.h>

#include <memory>

#include "base/status.h"
#include "format/writer.h"
#include "sampler/perf_recorder.h"
#include "sampler/stack_unwinder.h"

namespace hotline::sampler {

struct RecordingOptions {
  uint32_t freq_hz = 1000;
  uint32_t max_depth = 256;
  // Write THREAD_START/THREAD_END records too: when no runtime does (a static program).
  bool write_threads = false;
};

class Recording : public PerfHandler {
 public:
  // Starts sampling `pid` from its next exec, writing the stream to `stream_fd`.
  Status start(pid_t pid, const RecordingOptions& options, int stream_fd);
  // Waits up to `timeout_ms` for data and writes what there is.
  void pump(int timeout_ms);
  // Reads what is left and flushes; call once the program has ended.
  Status finish();

  uint64_t samples() const { return samples_; }
  uint64_t childrens_samples() const { return childrens_samples_; }
  uint64_t lost() const { return perf_.lost(); }

  void onSample(const PerfSample& sample) override;
  void onMapping(const PerfMapping& mapping) override;
  void onTask(const PerfTask& task) override;
  void onComm(const PerfComm& comm) override;

 private:
  void threadSeen(uint32_t tid, uint64_t time);

  PerfRecorder perf_;
  StackUnwinder unwinder_;
  format::Writer writer_;
  RecordingOptions options_;
  uint32_t pid_ = 0;
  uint64_t period_ns_ = 0;
  uint64_t next_module_ = format::kAppendedIdBase;
  uint64_t samples_ = 0, childrens_samples_ = 0;
  std::vector<uint32_t> threads_seen_;
  std::vector<uint64_t> frames_;
};

// Runtime address − ELF virtual address of the file an executable mapping shows, from the
// segment its file offset falls in (0 when the file cannot be read).
uint64_t LoadBias(const PerfMapping& mapping);

}  // namespace hotline::sampler

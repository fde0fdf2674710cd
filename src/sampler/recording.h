// What `hotline record` does while the program runs when the kernel samples it: samples it from
// outside (PerfRecorder), unwinds each sample (StackUnwinder), and writes modules, threads and
// samples as streams of chunks, one per image (a process as started or forked, and each program
// it executes), with ids from format::kAppendedIdBase (docs/format.md). A stream goes into its
// image's profile as it is written once the recording knows that file (attachFile); until then
// it waits in a scratch file.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "format/writer.h"
#include "sampler/perf_recorder.h"
#include "sampler/stack_unwinder.h"

namespace hotline::sampler {

struct RecordingOptions {
  uint32_t freq_hz = 1000;
  uint32_t max_depth = 256;
  uint32_t stack_bytes = kMaxStackBytes;
  bool wall_clock = false;  // also weigh the time threads spend off their CPU
  // Where the streams wait for the end of the run (unnamed files there).
  std::string scratch_dir = "/tmp";
};

// One image: a process from its start, fork or exec to its next exec or its end.
struct SampledImage {
  uint32_t pid = 0, ppid = 0;
  uint32_t execs = 0;   // 0: the process as started (or forked); k: after its k-th exec
  bool forked = false;  // a process the program forked, not the program itself
  const SampledImage* parent = nullptr;  // forked: the image it was forked from
  bool ended = false;                    // its process ended while sampled
  uint64_t start_time = 0;
  std::string exe;
  std::vector<std::string> argv;
  uint64_t samples = 0;
  // Samples whose stacks go on beyond what was unwound (past_copy: the kernel's copy ended
  // first), and whose walk stopped at a frame it could not follow.
  uint64_t stacks_truncated = 0, stacks_past_copy = 0, stacks_broken = 0;
  uint64_t cpu_ns = 0;  // the CPU time of its threads that ended, from their switch records
  // How the process ended, read from the kernel as it did (the exit status waitpid would give
  // its parent), when the kernel still had it; -1 when not known.
  int exit_status = -1;
  // The scratch stream, from offset 0 once Recording::finish() returned; -1 once the stream
  // went into its profile (attachFile).
  int stream_fd = -1;
  int file_fd = -1;  // the profile the stream goes into, once attached
};

class Recording : public PerfHandler {
 public:
  Recording();
  ~Recording() override;
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  // Starts sampling `pid` from its next exec. `exe` and `argv` describe the program it runs;
  // its stream goes into `profile_fd` (open for appending, which the caller keeps owning).
  Status start(pid_t pid, const std::string& exe, const std::vector<std::string>& argv,
               const RecordingOptions& options, int profile_fd);
  // Starts sampling the running process `pid`, all its threads, from now on, into
  // `profile_fd` (open for appending, which the caller keeps owning).
  Status attach(pid_t pid, const RecordingOptions& options, int profile_fd);
  // Waits up to `timeout_ms` for data and writes what there is.
  void pump(int timeout_ms);
  // Reads what is left and flushes every stream; call once the program has ended.
  Status finish();
  // From now on `image`'s stream goes into `profile_fd` (open for appending; the caller keeps
  // owning it), after what waited in its scratch file.
  Status attachFile(SampledImage& image, int profile_fd);
  // Sampling switched off or on from outside (the toggle signal sent to hotline): a STATE
  // record in the first image's stream, which the reports follow.
  void noteSwitch(bool on, format::StateSource source = format::StateSource::kSignal);
  // STATS records at the end of `image`'s stream, written at once (after finish()).
  Status addStats(const SampledImage& image,
                  const std::vector<std::pair<std::string, uint64_t>>& stats);
  // Writes what the streams that go into their profiles hold (a recorder killed later loses
  // only what came after).
  Status flushAttached();

  const std::vector<std::unique_ptr<SampledImage>>& images() const { return images_; }
  uint64_t lost() const { return perf_.lost(); }
  // Whether wall-clock mode knows where each wait began (switch-out stacks), rather than taking
  // the thread's last sampled stack for it.
  bool switch_stacks() const { return perf_.switch_stacks(); }

  void onSample(const PerfSample& sample) override;
  void onMapping(const PerfMapping& mapping) override;
  void onTask(const PerfTask& task) override;
  void onComm(const PerfComm& comm) override;
  void onSwitch(const PerfSwitch& change) override;
  void onRecordsDone() override;

 private:
  struct Stream;
  struct Thread {
    uint32_t pid = 0;
    uint64_t cpu_ns = 0;         // its stretches on a CPU, from its switch records
    uint64_t on_since = 0;       // when it last came on a CPU (0: off it, or not known)
    bool counted = false;        // cpu_ns is known: its first time on a CPU was seen
    uint64_t exit_time = 0;      // 0 while it runs
    bool ended = false;          // its THREAD_END is written
    uint64_t off_since = 0;      // wall clock: when it left its CPU (0: on it)
    uint64_t last_node = 0;      // wall clock: its latest stack, for a wait without one
    uint64_t wait_node = 0;      // wall clock: the stack it was seen blocked with
    uint64_t wait_node_for = 0;  // the off_since of the wait wait_node belongs to
    Stream* last_stream = nullptr;
    Stream* started_in = nullptr;  // the stream its THREAD_START went into last
    // Its latest stack, root first, and the node of each of its frames in path_stream: the
    // next sample shares most of it, and its nodes need no lookup.
    std::vector<uint64_t> path_frames, path_nodes;
    const Stream* path_stream = nullptr;
  };
  // `profile_fd`: the profile the stream goes into from the start; else a scratch file.
  Stream* addImage(uint32_t pid, uint32_t ppid, uint64_t time, bool forked, int profile_fd = -1);
  void addModule(Stream& stream, const PerfMapping& mapping, uint64_t bias, uint64_t time);
  Stream* imageAt(uint32_t pid, uint64_t time);
  // The thread, noted as running in `stream` (its THREAD_START written there the first time).
  Thread& threadSeen(Stream& stream, uint32_t tid, uint64_t time);
  void endThread(uint32_t tid, Thread& thread);
  // The thread left its CPU at `time`: its stretch on it joins its CPU time.
  void leaveCpu(Thread& thread, uint64_t time);
  // Periods in `ns` of CPU time, at least 1.
  uint64_t weightOf(uint64_t ns) const;
  void addWait(uint32_t tid, Thread& thread, uint64_t until);
  void flushStream(Stream& stream);
  void captureWaits();
  uint64_t blockedStack(uint32_t pid, uint32_t tid, Stream& stream);

  PerfRecorder perf_;
  StackUnwinder unwinder_;
  RecordingOptions options_;
  uint32_t root_pid_ = 0;
  bool attached_ = false;  // to a running process: its first thread's count began at attach
  uint64_t period_ns_ = 0;
  std::vector<std::unique_ptr<SampledImage>> images_;
  std::vector<std::unique_ptr<Stream>> streams_;     // parallel to images_
  std::map<uint32_t, std::vector<Stream*>> by_pid_;  // each process's images, oldest first
  std::map<uint32_t, Thread> threads_;
  std::map<uint32_t, uint64_t> remainders_;  // wall clock: off-CPU ns not yet a whole period
  std::vector<uint32_t> exited_;             // threads whose end waits for the drain's end
  std::vector<uint64_t> frames_;
  std::vector<uint8_t> stack_copy_;
  uint64_t last_flush_ = 0;
  Status write_error_;  // the first write to a profile that failed
};

// Runtime address − ELF virtual address of the file an executable mapping shows, from the
// segment its file offset falls in (0 when the file cannot be read).
uint64_t LoadBias(const PerfMapping& mapping);

}  // namespace hotline::sampler

// Sampling a process from outside it, through the kernel's perf_event ring buffers: the core of
// the kernel sampler (DESIGN.md, "Pipeline"). Nothing enters the sampled program: no signal, no
// timer, no descriptor; threads that block every signal are sampled like the others, static
// binaries too.
//
// PerfRecorder opens, on each online CPU, a task-clock sampling event that follows the process,
// its threads and its children (inherit), carrying the time (CLOCK_MONOTONIC, so samples
// interleave with the runtime's records), the pid and tid, the user-space registers and a copy
// of the top of the user stack, and reports the process's executable mappings (MMAP2), thread
// and process starts and ends (FORK, EXIT) and names (COMM). Drain() reads every ring and hands
// each record to a Handler. Not thread-safe: one thread opens, drains and closes.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace hotline::sampler {

// The most user stack the kernel copies with a sample (a 16-bit size, in whole words): the
// default, so that stacks of deep programs (60 to 150 frames of C++) reach their root.
inline constexpr uint32_t kMaxStackBytes = 65528;

struct PerfOptions {
  uint32_t freq_hz = 1000;      // samples per second of each thread's CPU time
  uint32_t stack_bytes = kMaxStackBytes;  // user stack copied with each sample (multiple of 8)
  // Data pages per CPU ring (a power of two): 128 and the header page make 516 KiB, what
  // perf_event_mlock_kb lets an unprivileged user lock per CPU by default.
  uint32_t ring_pages = 128;
  // The event starts when the process next calls exec (set for a child that is about to exec
  // the program, so its start-up in the recorder's image is not sampled).
  bool enable_on_exec = false;
  // When threads leave and regain a CPU (PerfSwitch) is always reported. This asks also, where
  // the kernel allows it (perf_event_paranoid 1 or below, or CAP_PERFMON), for a sample with the
  // stack at each switch-out (PerfSample::switch_out): what wall-clock mode needs to see waits.
  bool context_switches = false;
};

// The user-space registers of a sample, in the kernel's x86-64 order (PERF_REG_X86_*).
struct UserRegs {
  bool valid = false;  // false when the sample interrupted a kernel thread
  uint64_t ax = 0, bx = 0, cx = 0, dx = 0, si = 0, di = 0, bp = 0, sp = 0, ip = 0;
  uint64_t r8 = 0, r9 = 0, r10 = 0, r11 = 0, r12 = 0, r13 = 0, r14 = 0, r15 = 0;
};

struct PerfSample {
  uint32_t pid = 0, tid = 0, cpu = 0;
  uint64_t time = 0;        // CLOCK_MONOTONIC ns
  uint64_t period = 0;      // ns of task clock this sample stands for
  uint64_t ip = 0;          // where the sample was taken (a kernel address when in the kernel)
  bool switch_out = false;  // taken as the thread left its CPU, not by the clock
  UserRegs regs;
  // The copy of the user stack from regs.sp up; valid only during the Handler call.
  std::span<const uint8_t> stack;
};

// The name the kernel gives the vDSO's mapping.
inline constexpr const char* kVdso = "[vdso]";

struct PerfMapping {
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  uint64_t address = 0, length = 0, file_offset = 0;
  uint32_t prot = 0;
  std::string path;
  std::vector<uint8_t> build_id;  // empty when the kernel gave none
};

struct PerfTask {
  uint32_t pid = 0, ppid = 0, tid = 0, ptid = 0;
  uint64_t time = 0;
  bool exit = false;  // false: a FORK (a thread or a process started)
};

struct PerfComm {
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  std::string name;
  bool exec = false;  // the process executed a new program
};

// A thread left (`out`) or regained its CPU.
struct PerfSwitch {
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  bool out = false;
};

// Records other than samples reach the handler first, in time order, for everything the rings
// held when drain() began; then that drain's samples, ring by ring.
class PerfHandler {
 public:
  virtual ~PerfHandler() = default;
  virtual void onSample(const PerfSample&) {}
  virtual void onMapping(const PerfMapping&) {}
  virtual void onTask(const PerfTask&) {}
  virtual void onComm(const PerfComm&) {}
  virtual void onSwitch(const PerfSwitch&) {}
  // Called after the records of a drain and before its samples.
  virtual void onRecordsDone() {}
};

class PerfRecorder {
 public:
  PerfRecorder() = default;
  ~PerfRecorder();
  PerfRecorder(const PerfRecorder&) = delete;
  PerfRecorder& operator=(const PerfRecorder&) = delete;

  // Starts sampling `pid` (a process of the same user, or any with the right privileges) and
  // what it starts from now on.
  Status open(pid_t pid, const PerfOptions& options);
  // Starts sampling a running process: every thread it has, and what they start.
  Status attach(pid_t pid, const PerfOptions& options);
  // The threads of process `pid`, its first thread first.
  static std::vector<pid_t> Threads(pid_t pid);
  // Reads every ring to its end, handing each record to `handler`.
  void drain(PerfHandler& handler);
  // The descriptors to poll for data (readable when a ring has some).
  const std::vector<int>& descriptors() const { return fds_; }
  // Records the kernel dropped because a ring was full, and records too short to parse.
  uint64_t lost() const { return lost_; }
  uint64_t malformed() const { return malformed_; }
  // Whether switch-out samples carry stacks (context_switches asked, and the kernel allowed).
  bool switch_stacks() const { return switch_stacks_; }
  void close();

 private:
  struct Ring {
    void* base = nullptr;
    size_t mapped = 0;
    int cpu = 0;
  };
  // Walks a ring from its tail to `head`, handing samples or other records to `visit`.
  template <typename Visit>
  void walk(Ring& ring, uint64_t head, Visit visit);
  void openSwitchSampling(const perf_event_attr& clock, pid_t pid, int cpu, int ring_fd);
  void parse(const uint8_t* record, size_t size, PerfHandler& handler);

  std::vector<int> fds_;
  std::vector<int> switch_fds_;    // switch-out sampling, writing into the clock's rings
  std::vector<int> thread_fds_;    // attach: the other threads' events, into the same rings
  perf_event_attr attr_{};
  bool context_switches_ = false;
  std::vector<Ring> rings_;
  std::vector<uint8_t> scratch_;  // a record that wraps around the ring's end, made whole
  struct Pending {
    uint64_t time;
    std::vector<uint8_t> bytes;
  };
  std::vector<Pending> pending_;  // a drain's non-sample records, to be put in time order
  uint64_t regs_mask_ = 0;
  bool switch_stacks_ = false;
  uint64_t lost_ = 0, malformed_ = 0;
};

}  // namespace hotline::sampler

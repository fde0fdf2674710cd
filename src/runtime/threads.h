// Thread slots: one per live thread of the process, in static storage so the signal handler
// finds its ring without locks or allocation. Each slot owns the thread's sampling timer.
#pragma once

#include <pthread.h>
#include <signal.h>
#include <sys/types.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <span>

#include "runtime/ring.h"
#include "runtime/unwind.h"

namespace hotline::rt {

enum class SlotState : int { kFree = 0, kActive = 1, kExited = 2 };

struct ThreadSlot {
  std::atomic<int> state{0};  // SlotState
  pid_t tid = 0;
  SampleRing ring;
  StackBounds bounds;
  int perf_fd = -1;
  uint64_t perf_id = 0;  // the kernel's id of the perf event, to recognise the descriptor
  timer_t timer{};
  bool has_timer = false;
  std::atomic<uint64_t> dropped{0};    // samples lost to a full ring
  std::atomic<uint64_t> delivered{0};  // sampling signals that reached the thread
  // The writer's watch over threads that block the sampling signal with a raw system call.
  uint64_t watch_delivered = 0, watch_cpu_ns = 0;
  bool watch_baseline = false;
  bool muted = false;           // sampling paused: the thread blocks the signal
  uint64_t end_cpu_ns = 0;      // read when the process finishes, before the timer stops
  volatile int in_handler = 0;  // re-entrancy guard for the sampling handler
};

inline constexpr int kMaxThreads = 1024;
extern ThreadSlot g_slots[kMaxThreads];
// The slots ever claimed (a prefix of g_slots): what every scan of the slots goes over, so that
// a process with few threads never touches the rest (after fork, touching means copying).
std::span<ThreadSlot> UsedSlots();

// The calling thread's slot, or nullptr. Async-signal-safe.
ThreadSlot* CurrentSlot();
// Claims a slot for `tid` (the calling thread when self is true), maps its ring and starts its
// timer. Not for signal handlers. Returns nullptr when out of slots or memory.
ThreadSlot* RegisterThread(pid_t tid, bool self);
// Stops the slot's timer and hands the slot to the writer for a last drain.
void RetireSlot(ThreadSlot* slot);
// Stops the timer of a slot (any thread may call).
void StopTimer(ThreadSlot* slot);
// Starts the timer for slot->tid; returns the sampler that worked.
bool StartTimer(ThreadSlot* slot);
// After fork, in the child: every slot but the caller's is freed, the caller's gets its new tid
// and a new timer, and all rings are emptied (the parent writes what they held).
void ResetSlotsAfterFork();
// sigaltstack(2) as the program sees it: the alternate stack the runtime gives each thread (so
// a stack overflow still writes the profile) is invisible, and gives way to the program's own.
int ProgramSigaltstack(const stack_t* ss, stack_t* old);
// Writer thread, every cycle: a thread whose CPU clock went on for several periods without a
// single sample delivered, and whose mask blocks the sampling signal (a raw rt_sigprocmask got
// past ProgramSigmask), has its perf event paused until it unblocks, so that at most a few
// cycles' worth of samples ever wait in the kernel's queue. Returns the number of threads
// newly paused.
uint64_t WatchBlockedThreads();
// The CPU time of thread `tid` of this process, in ns (format::kCpuUnknown if it cannot be read:
// the thread is gone).
uint64_t ThreadCpuNs(pid_t tid);
// The same for a slot's thread, falling back to its perf event's count when the thread is gone
// (it ended while the process was finishing). Call before the slot's timer is stopped.
uint64_t SlotCpuNs(const ThreadSlot& slot);

pid_t GetTid();

}  // namespace hotline::rt

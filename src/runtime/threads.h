// Thread slots: one per live thread of the process, in static storage so the signal handler
// finds its ring without locks or allocation. Each slot owns the thread's sampling timer.
#pragma once

#include <pthread.h>
#include <sys/types.h>
#include <time.h>

#include <atomic>
#include <cstdint>

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
  timer_t timer{};
  bool has_timer = false;
  std::atomic<uint64_t> dropped{0};  // samples lost to a full ring
  volatile int in_handler = 0;       // re-entrancy guard for the sampling handler
};

inline constexpr int kMaxThreads = 1024;
extern ThreadSlot g_slots[kMaxThreads];

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
// The CPU time of thread `tid` of this process, in ns (0 if it cannot be read).
uint64_t ThreadCpuNs(pid_t tid);

pid_t GetTid();

}  // namespace hotline::rt

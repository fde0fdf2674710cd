// The runtime's process-wide state: configuration, the profile being written, the writer
// thread, and the life cycle (start, fork, exec, exit, fatal signal).
#pragma once

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdint>

#include "format/schema.h"
#include "format/writer.h"
#include "runtime/config.h"

namespace hotline::rt {

enum class Phase : int { kOff = 0, kRunning = 1, kFinishing = 2, kDone = 3 };

struct Session {
  Config config;
  std::atomic<int> phase{0};         // Phase
  std::atomic<bool> enabled{true};   // sampling on (hotline_start/stop, toggle signal)
  std::atomic<uint64_t> toggles{0};  // toggle-signal flips (each one is kept: NoteToggle)
  pid_t pid = 0;
  int sample_signal = 0;
  int watch_signal = 0;  // the watchpoints' traps (watch.h); 0 until something is watched
  format::Sampler sampler = format::Sampler::kNone;
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;  // guards writer and everything it writes
  format::Writer* writer = nullptr;
  // The profile, opened for each write only (no descriptor stays in the program); empty in a
  // forked child until its profile exists.
  char path[4096] = {};
  // A forked child opens its profile only once it has something to record (a sample, an event);
  // one that ends before leaves no file, and is counted in `shared` instead.
  bool file_pending = false;
  bool child_has_events = false;  // the program marked, switched, or started a thread
  bool counted_at_exec = false;   // counted as profile-less when it exec'd
  // A forked child's first records (process, modules, its thread), written by whoever takes
  // the session lock first after fork, so that fork itself returns quickly.
  bool preamble_pending = false;
  pid_t preamble_tid = 0;
  struct SharedCounters* shared = nullptr;
  uint64_t last_flush = 0;
  pthread_t writer_thread{};
  bool writer_running = false;
  // No writer thread: nothing fills while the program runs that only a thread of the runtime's
  // can empty in time (no signal sampling, no timed tracing, no watchpoints). The program stays
  // single-threaded, so glibc's malloc keeps its lock-free fast path, and the program's own calls
  // into the runtime (the heap's hooks) do the writer's rounds (WriteIfDue).
  std::atomic<bool> threadless{false};
  std::atomic<bool> writer_stop{false};
  pthread_cond_t writer_wake = PTHREAD_COND_INITIALIZER;
  // Counters written as STATS at the end.
  uint64_t samples = 0, stacks_broken = 0, stacks_truncated = 0;
  uint64_t threads_paused = 0;  // sampling paused: the thread blocked the signal (raw syscall)
  std::atomic<uint64_t> unowned_signals{0};  // sampling signals on threads without a slot
  // The program's threads that will pass through OnThreadExit: counted by pthread_create
  // before the thread exists, so the count never reaches 0 while a thread is being born.
  std::atomic<int> live_threads{0};
  uint64_t exit_code = 0;
  bool exit_code_known = false;

  // The process `hotline record` started, in its first image: it writes the configured output
  // and reports for the whole run.
  bool rootImage() const { return config.root_pid == uint64_t(pid) && !config.later_image; }
};

// One page shared by every process of the run (MAP_SHARED, inherited through fork): what the
// root process reports for the children that left no profile.
struct SharedCounters {
  std::atomic<uint64_t> children_without_profile{0};
  std::atomic<uint64_t> children_without_profile_cpu_ns{0};
};

extern Session g_session;

inline bool Running() {
  return g_session.phase.load(std::memory_order_acquire) == int(Phase::kRunning);
}

uint64_t NowNs();

// The session lock. Holding it marks the thread as inside the runtime, so what the runtime does
// meanwhile (allocating, say) is never taken for the program's own work.
void LockSession();
void UnlockSession();

// Start-up from the library constructor. Never fails loudly: on failure the runtime stays off.
void StartSession();
// Writes what is left and closes the profile. With `bounded` (signal handlers, _exit) it waits
// at most a second for the lock and does not join the writer thread.
void FinishSession(format::EndHow how, uint64_t code, bool bounded);
// Claims a slot and a timer for the calling thread (a thread the program just started, which
// its creator counted in live_threads).
void RegisterCurrentThread();
// Called by the toggle-signal handler after the flip: notes its time and the new state, for the
// next round to write (async-signal-safe).
void NoteToggle();
// In a threadless session, from the program's calls into the runtime (the heap's hooks): one
// round of the writer thread's work (drain, module check, flush when due) when the last one is
// older than the writer's interval. Costs a clock read when not due; skips the round when
// another thread holds the session lock. Not for signal handlers; takes the lock itself.
void WriteIfDue();
// Something that needs the writer thread begins while the session is threadless (the program
// calls hotline_watch): starts it. Call without the session lock held.
void EnsureWriterThread();
// Re-reads the module map when the loader reports loads or unloads (cheap when none).
void CheckModulesLocked();
// Stops sampling, drains and flushes before exec, leaving the profile open in case exec
// fails; ResumeAfterFailedExec() then starts sampling again.
void FlushBeforeExec();
void ResumeAfterFailedExec();

// Writer-side helpers for records made in ordinary (non-signal) context; each takes the lock.
void RecordThreadStart(pid_t tid, bool preexisting);
void RecordThreadName(pid_t tid, const char* name);
void RecordState(bool on, format::StateSource source);
void RecordMark(const char* label);
// hotline_size(n): a SIZE record for the calling thread's innermost timed call (trace.h).
void RecordSize(uint64_t n);
void RecordDisabled(const char* reason);

// Fork protocol (pthread_atfork).
void BeforeFork();
void AfterForkParent();
void AfterForkChild();

}  // namespace hotline::rt

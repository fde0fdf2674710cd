// The runtime's signal handlers (sampling, toggle, fatal) and the program's view of them.
// The program may install handlers on any signal; on the signals the runtime manages its
// handler is kept as the chained one, so both keep working.
#pragma once

#include <signal.h>

#include <cstdint>

namespace hotline::rt {

// Picks a free real-time signal for sampling and installs every handler. Not async-signal-safe.
bool InstallSignalHandlers();
// Installs `handler` on a free real-time signal (managed: the program's sigaction on it is
// emulated) and returns the signal, or 0 when none is free. Not async-signal-safe.
int InstallRuntimeSignal(void (*handler)(int, siginfo_t*, void*));
// Runs the program's own handler for `sig`; false when it left the default action.
bool ChainSignalToProgram(int sig, siginfo_t* info, void* uc);
// True when the runtime manages `sig` (the program's sigaction is then emulated).
bool IsManagedSignal(int sig);
// The program's sigaction on a managed signal: stores `act` (if any), gives the kernel what it
// implies (an ignored signal is ignored for real; a handler keeps the program's flags and mask)
// and returns the old one. Returns sigaction's result.
int ProgramSigaction(int sig, const struct sigaction* act, struct sigaction* old);
// The program's sigaction on the toggle signal while the runtime's handler is on it: the
// program sees the default action, and installing its own takes the signal over. False (and
// nothing done) for any other signal; else the result is in *result.
bool ProgramToggleSigaction(int sig, const struct sigaction* act, struct sigaction* old,
                            int* result);
// The real sigaction, bypassing the interposed one.
int RealSigaction(int sig, const struct sigaction* act, struct sigaction* old);
// Drops sampling signals still queued (sets SIG_DFL, which exec keeps), and puts the handler
// back when exec failed.
void DiscardPendingSamples();
void RestoreSampleHandler();
// Counts the sampling signals that arrived on the calling thread (for EINTR retries).
unsigned long SamplesOnThisThread();

bool IsOurTimerSignal(const siginfo_t* info);

// The sampling signal is never blocked in any thread: a thread that blocks every signal
// (liblzma's workers, most thread pools) would otherwise pile samples up in the kernel's queue
// until the user's limit (ulimit -i) is reached, and then every real-time signal of the user
// fails. The program's pthread_sigmask and sigprocmask go through ProgramSigmask, which keeps
// the signal out of the real mask and shows the program the mask it asked for.
using SigmaskFn = int (*)(int, const sigset_t*, sigset_t*);
int ProgramSigmask(int how, const sigset_t* set, sigset_t* old, SigmaskFn real);
// The mask survives exec: before it, the calling thread really blocks the runtime's signals the
// program believes it blocks, so the new program starts with the mask it would have had; after
// a failed exec they are let through again.
void ShowProgramMaskToExec(bool before_exec);
// Removes the sampling and watch signals from a mask the program gives the kernel (a handler's
// sa_mask).
void StripSampleSignal(sigset_t* set);
// The program's view, inherited by the threads it creates.
bool ProgramBlocksSample();
void SetProgramBlocksSample(bool blocked);
// SIGIOs the kernel sent because a sample could not be queued, which were not let kill the
// program.
uint64_t SigioAbsorbed();

// Marks runtime code on this thread, so samples taken inside it go to [profiler]. A signal sent
// to end the process (kill, a pool's terminate), taken inside it, is acted on when the thread
// leaves: ending the profile needs what the interrupted code may hold (the session's lock, the
// allocator's).
void EnterRuntime();
void LeaveRuntime();
bool InRuntimeNow();
struct InRuntime {
  InRuntime() { EnterRuntime(); }
  ~InRuntime() { LeaveRuntime(); }
  InRuntime(const InRuntime&) = delete;
  InRuntime& operator=(const InRuntime&) = delete;
};

// Marks a call into the C library's allocator (g_real's entries do), for the same deferral:
// the interrupted call may hold the arena's lock, which writing the profile's end would wait
// for for ever (a python3 pool's worker terminated inside free once hung so).
extern __thread int t_in_allocator __attribute__((tls_model("initial-exec")));
extern __thread int t_deferred_signal __attribute__((tls_model("initial-exec")));
void ActOnDeferredSignal();
struct InAllocator {
  InAllocator() { ++t_in_allocator; }
  ~InAllocator() {
    if (--t_in_allocator == 0 && t_deferred_signal) ActOnDeferredSignal();
  }
  InAllocator(const InAllocator&) = delete;
  InAllocator& operator=(const InAllocator&) = delete;
};

}  // namespace hotline::rt

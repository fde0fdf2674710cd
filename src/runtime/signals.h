// The runtime's signal handlers (sampling, toggle, fatal) and the program's view of them.
// The program may install handlers on any signal; on the signals the runtime manages its
// handler is kept as the chained one, so both keep working.
#pragma once

#include <signal.h>

namespace hotline::rt {

// Picks a free real-time signal for sampling and installs every handler. Not async-signal-safe.
bool InstallSignalHandlers();
// True when the runtime manages `sig` (the program's sigaction is then emulated).
bool IsManagedSignal(int sig);
// The program's sigaction on a managed signal: stores `act` (if any) and returns the old one.
void ProgramSigaction(int sig, const struct sigaction* act, struct sigaction* old);
// The real sigaction, bypassing the interposed one.
int RealSigaction(int sig, const struct sigaction* act, struct sigaction* old);
// Drops sampling signals still queued (sets SIG_DFL, which exec keeps), and puts the handler
// back when exec failed.
void DiscardPendingSamples();
void RestoreSampleHandler();
// Counts the sampling signals that arrived on the calling thread (for EINTR retries).
unsigned long SamplesOnThisThread();

bool IsOurTimerSignal(const siginfo_t* info);

// Marks runtime code on this thread, so samples taken inside it go to [profiler].
void EnterRuntime();
void LeaveRuntime();
bool InRuntimeNow();
struct InRuntime {
  InRuntime() { EnterRuntime(); }
  ~InRuntime() { LeaveRuntime(); }
  InRuntime(const InRuntime&) = delete;
  InRuntime& operator=(const InRuntime&) = delete;
};

}  // namespace hotline::rt

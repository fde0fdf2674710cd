// Which signals may serve as hotline's toggle signal. Shared by the CLI (which refuses the
// others with a message) and the runtime (which ignores them), so both agree. And which
// real-time signal a sampler in the program may take.
#pragma once

#include <signal.h>

namespace hotline {

// Why `sig` cannot toggle sampling, or nullptr when it can. A toggle must be a signal the
// program can receive without meaning anything else: not a fault (a crashing program would
// toggle forever instead of dying), not uncatchable, not one the runtime handles as the end
// of the program, not job control, and not one glibc keeps for itself.
inline const char* ToggleSignalProblem(int sig) {
  switch (sig) {
    case SIGSEGV:
    case SIGBUS:
    case SIGILL:
    case SIGFPE:
    case SIGTRAP:
    case SIGSYS:
      return "it reports a fault in the program";
    case SIGKILL:
    case SIGSTOP:
      return "it cannot be caught";
    case SIGABRT:
    case SIGTERM:
    case SIGINT:
    case SIGQUIT:
    case SIGIO:
      return "hotline handles it to write the profile when the program ends";
    case SIGCHLD:
    case SIGCONT:
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
      return "it is used for job control";
    default:
      break;
  }
  if (sig <= 0 || sig >= NSIG) return "it is not a signal number";
  if (sig >= __SIGRTMIN && sig < SIGRTMIN) return "the C library keeps it for itself";
  return nullptr;
}

// A real-time signal nobody handles yet, from the top down (glibc keeps the first two for
// itself), asking `query` (sigaction, or the runtime's un-interposed one); 0 when none is free.
inline int FreeRealtimeSignal(int (*query)(int, const struct sigaction*, struct sigaction*)) {
  for (int sig = SIGRTMAX - 2; sig >= SIGRTMIN + 2; --sig) {
    struct sigaction cur;
    if (query(sig, nullptr, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL)
      return sig;
  }
  return 0;
}

}  // namespace hotline

// A perl program killed by a signal (SIGTERM from timeout or a service manager, Ctrl-C, a
// broken pipe) still leaves what was measured, with its END saying which signal. The handler
// only notes the signal: writing the profile takes locks and allocates, which is not for a
// handler. The next statement boundary, which both modes pass all the time, writes the profile,
// puts the default action back and raises the signal again, so the program dies of it as it
// would have. A program that runs no statement meanwhile (blocked in a call perl restarts
// after a signal, or in a long XS call) dies of it a fifth of a second later all the same,
// without the last part of its profile.
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "base/signals.h"
#include "profiler.h"

namespace hotline::perl {

std::atomic<int> g_fatal_signal{0};

namespace {

// Signals whose default action ends the process and which the program does not handle or
// ignore itself when the module loads (perl installs its own handler for each %SIG entry
// later, which then takes the signal over).
constexpr int kFatal[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2};
constexpr long kGraceNs = 200'000'000;

timer_t g_watchdog;
bool g_watchdog_armed = false;

// Dies of `sig` as the default action would have.
void DieOf(int sig) {
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
}

void OnFatal(int sig) {
  int none = 0;
  if (!g_fatal_signal.compare_exchange_strong(none, sig)) return;  // one is on its way
  NoteFatalSignal();
  if (g_watchdog_armed) {
    itimerspec grace{{0, 0}, {0, kGraceNs}};
    timer_settime(g_watchdog, 0, &grace, nullptr);
  } else {
    DieOf(sig);
  }
}

void OnWatchdog(int, siginfo_t* info, void*) {
  if (info->si_code != SI_TIMER) return;
  int sig = g_fatal_signal.load();
  if (sig) DieOf(sig);
}

}  // namespace

void InstallFatalHandlers() {
  int watchdog_signal = FreeRealtimeSignal(::sigaction);
  if (watchdog_signal) {
    struct sigaction act;
    std::memset(&act, 0, sizeof act);
    act.sa_sigaction = OnWatchdog;
    act.sa_flags = SA_SIGINFO | SA_RESTART;
    sigevent ev;
    std::memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = watchdog_signal;
    g_watchdog_armed = sigaction(watchdog_signal, &act, nullptr) == 0 &&
                       timer_create(CLOCK_MONOTONIC, &ev, &g_watchdog) == 0;
  }
  for (int sig : kFatal) {
    struct sigaction cur;
    if (sigaction(sig, nullptr, &cur) != 0 || (cur.sa_flags & SA_SIGINFO) ||
        cur.sa_handler != SIG_DFL)
      continue;
    struct sigaction act;
    std::memset(&act, 0, sizeof act);
    act.sa_handler = OnFatal;
    // No SA_RESTART: a system call the signal interrupts returns, so that a statement comes.
    sigaction(sig, &act, nullptr);
  }
}

void TakeFatalSignal() {
  int sig = g_fatal_signal.load();
  Finish(fmt::EndHow::kSignal, uint64_t(sig));
  DieOf(sig);
  _exit(128 + sig);  // a signal that does not kill after all (blocked by the kernel's rules)
}

}  // namespace hotline::perl

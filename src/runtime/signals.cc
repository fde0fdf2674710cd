#include "runtime/signals.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "base/signals.h"
#include "runtime/session.h"
#include "runtime/threads.h"
#include "runtime/trace.h"
#include "runtime/unwind.h"

namespace hotline::rt {

__thread int t_in_allocator __attribute__((tls_model("initial-exec"))) = 0;
__thread int t_deferred_signal __attribute__((tls_model("initial-exec"))) = 0;

namespace {

// SIGIO is among them because the kernel sends it when a real-time signal cannot be queued
// (the user's queue is full): it must never kill the program because of a sample.
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGTERM, SIGINT,
                                 SIGFPE,  SIGILL, SIGQUIT, SIGIO};

struct sigaction g_program_actions[NSIG];
bool g_managed[NSIG];
std::atomic<int> g_crashing{0};
__thread unsigned long t_samples __attribute__((tls_model("initial-exec"))) = 0;
__thread int t_in_runtime __attribute__((tls_model("initial-exec"))) = 0;
// Whether the program believes this thread blocks the sampling signal (it never really does).
__thread bool t_program_blocks_sample __attribute__((tls_model("initial-exec"))) = false;
__thread bool t_program_blocks_watch __attribute__((tls_model("initial-exec"))) = false;
std::atomic<uint64_t> g_sigio_absorbed{0};

using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);

SigactionFn RealSigactionFn() {
  static SigactionFn fn = reinterpret_cast<SigactionFn>(dlsym(RTLD_NEXT, "sigaction"));
  return fn;
}

bool IsFatalSignal(int sig) {
  for (int fatal : kFatalSignals)
    if (fatal == sig) return true;
  return false;
}

int ApplyFatalAction(int sig);

// Runs the program's handler for `sig` as the kernel would have. Returns false if the program
// left the default action in place.
bool ChainToProgram(int sig, siginfo_t* info, void* uc) {
  struct sigaction& act = g_program_actions[sig];
  if (act.sa_flags & SA_SIGINFO) {
    if (!act.sa_sigaction) return false;
    auto handler = act.sa_sigaction;
    if (act.sa_flags & SA_RESETHAND) {
      act.sa_handler = SIG_DFL, act.sa_flags &= ~SA_SIGINFO;
      if (IsFatalSignal(sig)) ApplyFatalAction(sig);
    }
    handler(sig, info, uc);
    return true;
  }
  if (act.sa_handler == SIG_DFL) return false;
  if (act.sa_handler == SIG_IGN) return true;
  auto handler = act.sa_handler;
  if (act.sa_flags & SA_RESETHAND) {
    act.sa_handler = SIG_DFL;
    if (IsFatalSignal(sig)) ApplyFatalAction(sig);
  }
  handler(sig);
  return true;
}

// Whether the program's action on `sig` is a handler that does not restart system calls.
bool InterruptsSystemCalls(int sig) {
  struct sigaction act;
  if (g_managed[sig]) {
    act = g_program_actions[sig];
  } else if (RealSigaction(sig, nullptr, &act) != 0) {
    return false;
  }
  bool handler = (act.sa_flags & SA_SIGINFO)
                     ? act.sa_sigaction != nullptr
                     : act.sa_handler != SIG_DFL && act.sa_handler != SIG_IGN;
  return handler && !(act.sa_flags & SA_RESTART);
}

// A sample that interrupts a blocking system call restarts it (SA_RESTART), and the kernel has
// already set the call up to run again when the sampling handler begins. A signal of the
// program's that arrives meanwhile (the handler keeps the program's signals blocked while it
// runs) is delivered before the call runs again, which then blocks anew: without hotline the
// same signal would have ended the call with EINTR, as its handler asks. So when such a signal
// is pending as the handler ends, the restart becomes that EINTR.
void InterruptLikeTheProgramsSignal(ucontext_t* uc) {
  auto* ip = reinterpret_cast<const uint8_t*>(uc->uc_mcontext.gregs[REG_RIP]);
  if (ip[0] != 0x0f || ip[1] != 0x05) return;  // not at a `syscall` instruction
  sigset_t pending;
  if (sigpending(&pending) != 0) return;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == g_session.sample_signal || sigismember(&pending, sig) != 1 ||
        sigismember(&uc->uc_sigmask, sig) == 1 || !InterruptsSystemCalls(sig))
      continue;
    uc->uc_mcontext.gregs[REG_RAX] = -EINTR;
    uc->uc_mcontext.gregs[REG_RIP] += 2;
    return;
  }
}

void OnSample(int sig, siginfo_t* info, void* uc) {
  int saved_errno = errno;
  ThreadSlot* slot = CurrentSlot();
  bool ours = IsOurTimerSignal(info) || (info->si_code > 0 && info->si_code <= POLL_HUP && slot &&
                                         info->si_fd == slot->perf_fd);
  if (!ours && !(info->si_code > 0 && info->si_code <= POLL_HUP && !slot)) {
    ChainToProgram(sig, info, uc);
    errno = saved_errno;
    return;
  }
  ++t_samples;
  if (slot) slot->delivered.fetch_add(1, std::memory_order_relaxed);
  if (!slot) {
    g_session.unowned_signals.fetch_add(1, std::memory_order_relaxed);
  } else if (Running() && g_session.enabled.load(std::memory_order_relaxed) && !slot->in_handler &&
             slot->state.load(std::memory_order_acquire) == int(SlotState::kActive)) {
    slot->in_handler = 1;
    bool in_runtime = t_in_runtime > 0;
    // The unwinder is runtime code: libunwind's locks save and restore the signal mask through
    // sigprocmask, which must reach the kernel as it is, not be taken for the program's own
    // mask (the saved one holds this very signal, which the kernel blocks in its handler).
    EnterRuntime();
    if (SampleEntry* e = slot->ring.reserve()) {
      e->time = NowNs();
      e->weight =
          1 + uint64_t(IsOurTimerSignal(info) && info->si_overrun > 0 ? info->si_overrun : 0);
      e->flags = in_runtime ? uint32_t(format::kSampleInRuntime) : 0;
      uint32_t max = g_session.config.max_depth;
      // A traced thread's shadow stack is exact and costs no unwinding.
      uint64_t pc = uint64_t(static_cast<ucontext_t*>(uc)->uc_mcontext.gregs[REG_RIP]);
      e->depth = CurrentTraceMode() != format::TraceMode::kNone
                     ? ShadowStack(pc, e->frames, max, &e->flags)
                     : 0;
      if (e->depth == 0) {
        e->depth = g_session.config.unwinder == format::Unwinder::kDwarf
                       ? UnwindDwarf(uc, e->frames, max, &e->flags)
                       : UnwindFramePointers(uc, slot->bounds, e->frames, max, &e->flags);
      }
      slot->ring.publish();
    } else {
      slot->dropped.fetch_add(1, std::memory_order_relaxed);
    }
    LeaveRuntime();
    slot->in_handler = 0;
    // Samples that came while this one was taken (the signal is blocked in its own handler)
    // wait in the kernel's queue; a handler slower than the period (a deep unwind at a high
    // rate) would let them fill it. They stand for the handler's own time: taken and dropped.
    sigset_t own;
    sigemptyset(&own);
    sigaddset(&own, sig);
    timespec now{0, 0};
    siginfo_t queued;
    while (sigtimedwait(&own, &queued, &now) == sig) {
      ++t_samples;
      slot->delivered.fetch_add(1, std::memory_order_relaxed);
    }
  }
  InterruptLikeTheProgramsSignal(static_cast<ucontext_t*>(uc));
  errno = saved_errno;
}

void OnToggle(int sig, siginfo_t* info, void* uc) {
  // A foreign sender (kill/sigqueue from outside) toggles; nothing else reaches this handler,
  // since a program installing its own handler on this signal takes it over.
  (void)sig;
  (void)info;
  (void)uc;
  g_session.enabled.store(!g_session.enabled.load());
  NoteToggle();
  g_session.toggles.fetch_add(1);
}

// The default action would end the process: the profile is written first, once, and the
// signal then acts as it would have.
void EndBySignal(int sig, bool sent) {
  if (g_crashing.exchange(1) == 0) FinishSession(format::EndHow::kSignal, uint64_t(sig), true);
  // Another thread writing the END (the program leaving by exit as the signal came) is given
  // up to a second to finish it.
  for (int waited_ms = 0; g_session.phase.load() == int(Phase::kFinishing) && waited_ms < 1000;
       ++waited_ms) {
    timespec ms{0, 1000000};
    nanosleep(&ms, nullptr);
  }
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  RealSigaction(sig, &dfl, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  // A fault re-executes its instruction and dies by it; a sent signal must be sent again.
  if (sent) raise(sig);
}

void OnFatal(int sig, siginfo_t* info, void* uc) {
  int saved_errno = errno;
  if (ChainToProgram(sig, info, uc)) {
    errno = saved_errno;
    return;
  }
  if (sig == SIGIO && info->si_code == SI_KERNEL &&
      (g_session.sampler == format::Sampler::kPerfTaskClock || g_session.watch_signal > 0)) {
    // A sample or a watchpoint's trap that found the user's signal queue full: absorbed, never
    // the program's death.
    g_sigio_absorbed.fetch_add(1, std::memory_order_relaxed);
    errno = saved_errno;
    return;
  }
  bool sent =
      info->si_code <= 0 || sig == SIGABRT || sig == SIGTERM || sig == SIGINT || sig == SIGQUIT;
  // Inside the runtime or the allocator the profile cannot be ended safely: the thread goes on
  // to the end of that call, and acts on the signal there (a fault cannot wait: its instruction
  // would run again).
  if (sent && (t_in_runtime > 0 || t_in_allocator > 0)) {
    t_deferred_signal = sig;
    errno = saved_errno;
    return;
  }
  EndBySignal(sig, sent);
  errno = saved_errno;
}

// What the kernel holds for a fatal signal, from what the program asked for. An ignored signal
// is ignored for real, so that exec hands it on ignored, as it would without hotline (nohup,
// shells' background jobs). A handler of the program's runs inside OnFatal with the program's
// own flags and mask: without SA_RESTART, a system call the signal interrupts fails with EINTR
// as it would without hotline. SA_RESETHAND is emulated by ChainToProgram, so that the
// runtime's handler stays to end the profile. Only the default action gets the runtime's own
// flags (its handler on the alternate stack, so a stack overflow still ends the profile).
int ApplyFatalAction(int sig) {
  const struct sigaction& program = g_program_actions[sig];
  struct sigaction act;
  std::memset(&act, 0, sizeof act);
  bool has_handler = (program.sa_flags & SA_SIGINFO) ? program.sa_sigaction != nullptr
                                                     : program.sa_handler != SIG_DFL;
  if (!(program.sa_flags & SA_SIGINFO) && program.sa_handler == SIG_IGN) {
    act = program;
    StripSampleSignal(&act.sa_mask);
    return RealSigaction(sig, &act, nullptr);
  }
  act.sa_sigaction = OnFatal;
  if (has_handler) {
    act.sa_flags = SA_SIGINFO | (program.sa_flags & (SA_RESTART | SA_ONSTACK | SA_NODEFER));
    act.sa_mask = program.sa_mask;
    StripSampleSignal(&act.sa_mask);
  } else {
    act.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&act.sa_mask);
  }
  return RealSigaction(sig, &act, nullptr);
}

bool Install(int sig, void (*handler)(int, siginfo_t*, void*), int extra_flags) {
  struct sigaction act;
  std::memset(&act, 0, sizeof act);
  act.sa_sigaction = handler;
  act.sa_flags = SA_SIGINFO | SA_RESTART | extra_flags;
  sigemptyset(&act.sa_mask);
  struct sigaction old;
  if (RealSigaction(sig, &act, &old) != 0) return false;
  g_program_actions[sig] = old;  // whatever was there before us (usually SIG_DFL)
  g_managed[sig] = true;
  return true;
}

// The fatal signals: the program's action as it was before the runtime (inherited ignored
// ones stay ignored), kept in the kernel through ApplyFatalAction.
bool InstallFatal(int sig) {
  struct sigaction cur;
  if (RealSigaction(sig, nullptr, &cur) != 0) return false;
  g_program_actions[sig] = cur;
  g_managed[sig] = true;
  return ApplyFatalAction(sig) == 0;
}

// The toggle handler, when the runtime installed it: the program still sees the default action
// it had, until it installs its own, which then takes the signal over.
int g_toggle_installed = 0;

}  // namespace

int RealSigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  SigactionFn fn = RealSigactionFn();
  if (!fn) {
    errno = ENOSYS;
    return -1;
  }
  return fn(sig, act, old);
}

bool ChainSignalToProgram(int sig, siginfo_t* info, void* uc) {
  return ChainToProgram(sig, info, uc);
}

int InstallRuntimeSignal(void (*handler)(int, siginfo_t*, void*)) {
  // A real-time signal nobody handles yet; glibc keeps the first two for itself.
  for (int sig = SIGRTMAX - 2; sig >= SIGRTMIN + 2; --sig) {
    if (sig == g_session.sample_signal || IsManagedSignal(sig)) continue;
    struct sigaction cur;
    if (RealSigaction(sig, nullptr, &cur) != 0 || (cur.sa_flags & SA_SIGINFO) ||
        cur.sa_handler != SIG_DFL)
      continue;
    return Install(sig, handler, 0) ? sig : 0;
  }
  return 0;
}

bool IsManagedSignal(int sig) { return sig > 0 && sig < NSIG && g_managed[sig]; }

int ProgramSigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  struct sigaction before = g_program_actions[sig];
  if (act) {
    g_program_actions[sig] = *act;
    if (IsFatalSignal(sig) && ApplyFatalAction(sig) != 0) {
      int saved = errno;
      g_program_actions[sig] = before;
      errno = saved;
      return -1;
    }
  }
  if (old) *old = before;
  return 0;
}

bool ProgramToggleSigaction(int sig, const struct sigaction* act, struct sigaction* old,
                            int* result) {
  if (!g_toggle_installed || sig != g_toggle_installed) return false;
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  if (act) {
    *result = RealSigaction(sig, act, nullptr);
    if (*result != 0) return true;
    g_toggle_installed = 0;  // the program's now
  } else {
    *result = 0;
  }
  if (old) *old = dfl;
  return true;
}

unsigned long SamplesOnThisThread() { return t_samples; }

void DiscardPendingSamples() {
  if (g_session.sample_signal <= 0) return;
  struct sigaction act;
  std::memset(&act, 0, sizeof act);
  act.sa_handler = SIG_IGN;
  RealSigaction(g_session.sample_signal, &act, nullptr);
  act.sa_handler = SIG_DFL;
  RealSigaction(g_session.sample_signal, &act, nullptr);
}

namespace {
// The sampling handler keeps the program's signals out while it runs (all but the faults,
// which cannot wait), for InterruptLikeTheProgramsSignal.
bool InstallSampleHandler(int sig) {
  if (!Install(sig, OnSample, 0)) return false;
  struct sigaction act;
  RealSigaction(sig, nullptr, &act);
  sigfillset(&act.sa_mask);
  for (int fault : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS})
    sigdelset(&act.sa_mask, fault);
  return RealSigaction(sig, &act, nullptr) == 0;
}
}  // namespace

void RestoreSampleHandler() {
  if (g_session.sample_signal > 0) InstallSampleHandler(g_session.sample_signal);
}

bool InstallSignalHandlers() {
  // Sampled by the kernel from outside, or not sampled: no sampling signal at all (and so no
  // mask filtering, no sleep resumption, nothing to discard at exec).
  if (g_session.config.sampling() && !g_session.config.kernel_sampler) {
    int chosen = FreeRealtimeSignal(RealSigaction);
    if (!chosen) return false;
    g_session.sample_signal = chosen;
    if (!InstallSampleHandler(chosen)) return false;
  }
  int toggle = g_session.config.toggle_signal;
  if (toggle > 0 && toggle < NSIG && toggle != g_session.sample_signal) {
    struct sigaction cur;
    if (RealSigaction(toggle, nullptr, &cur) == 0 && cur.sa_handler == SIG_DFL &&
        !(cur.sa_flags & SA_SIGINFO)) {
      struct sigaction act;
      std::memset(&act, 0, sizeof act);
      act.sa_sigaction = OnToggle;
      act.sa_flags = SA_SIGINFO | SA_RESTART;
      if (RealSigaction(toggle, &act, nullptr) == 0) g_toggle_installed = toggle;
    }
  }
  // A handler the program set before we ran (and an ignored signal) is kept as the program's.
  for (int sig : kFatalSignals) InstallFatal(sig);
  return true;
}

int ProgramSigmask(int how, const sigset_t* set, sigset_t* old, SigmaskFn real) {
  // The runtime's signals: sampling, and the watchpoints' traps (watch.h).
  const int sigs[2] = {g_session.sample_signal, g_session.watch_signal};
  bool* blocks[2] = {&t_program_blocks_sample, &t_program_blocks_watch};
  if ((sigs[0] <= 0 && sigs[1] <= 0) || !Running() || InRuntimeNow()) return real(how, set, old);
  bool blocked_before[2] = {*blocks[0], *blocks[1]};
  bool in_set[2] = {false, false};
  sigset_t filtered;
  if (set) filtered = *set;
  for (int i = 0; i < 2; ++i) {
    if (sigs[i] <= 0 || !set) continue;
    in_set[i] = sigismember(set, sigs[i]) == 1;
    sigdelset(&filtered, sigs[i]);
  }
  int result = real(how, set ? &filtered : nullptr, old);
  if (result != 0) return result;
  for (int i = 0; i < 2; ++i) {
    if (sigs[i] <= 0) continue;
    if (set) {
      if (how == SIG_SETMASK) *blocks[i] = in_set[i];
      if (how == SIG_BLOCK && in_set[i]) *blocks[i] = true;
      if (how == SIG_UNBLOCK && in_set[i]) *blocks[i] = false;
    }
    if (old && blocked_before[i]) sigaddset(old, sigs[i]);
  }
  return result;
}

void ShowProgramMaskToExec(bool before_exec) {
  sigset_t set;
  sigemptyset(&set);
  bool any = false;
  if (g_session.sample_signal > 0 && t_program_blocks_sample)
    any = sigaddset(&set, g_session.sample_signal) == 0;
  if (g_session.watch_signal > 0 && t_program_blocks_watch)
    any = sigaddset(&set, g_session.watch_signal) == 0 || any;
  if (any)
    syscall(SYS_rt_sigprocmask, before_exec ? SIG_BLOCK : SIG_UNBLOCK, &set, nullptr, _NSIG / 8);
}

void StripSampleSignal(sigset_t* set) {
  if (g_session.sample_signal > 0) sigdelset(set, g_session.sample_signal);
  if (g_session.watch_signal > 0) sigdelset(set, g_session.watch_signal);
}

bool ProgramBlocksSample() { return t_program_blocks_sample; }
void SetProgramBlocksSample(bool blocked) { t_program_blocks_sample = blocked; }
uint64_t SigioAbsorbed() { return g_sigio_absorbed.load(); }

void EnterRuntime() { ++t_in_runtime; }
void LeaveRuntime() {
  if (--t_in_runtime == 0 && t_deferred_signal) ActOnDeferredSignal();
}

void ActOnDeferredSignal() {
  if (t_in_runtime > 0 || t_in_allocator > 0) return;  // the outer section acts on it
  int sig = t_deferred_signal;
  t_deferred_signal = 0;
  int saved_errno = errno;
  // The program may have given the signal a handler meanwhile; it then runs as if the signal
  // came now.
  siginfo_t info{};
  info.si_signo = sig;
  info.si_code = SI_USER;
  ucontext_t here;
  getcontext(&here);
  OnFatal(sig, &info, &here);
  errno = saved_errno;
}
bool InRuntimeNow() { return t_in_runtime > 0; }

}  // namespace hotline::rt

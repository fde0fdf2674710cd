// Sampling mode (`hotline record --perl-sample`): a CPU-time clock's signal only notes that a
// sample is due (and, when the program is in native code outside the interpreter, that code's
// return addresses); the next statement boundary (a wrapper around pp_nextstate) takes it, where
// the interpreter's state is consistent: the statement that was running (still PL_curcop) and
// the subs on the context stacks. Reading those from the signal handler would race with a
// context being built.
#include <fcntl.h>
#include <link.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "base/signals.h"
#include "profiler.h"

namespace hotline::perl {
namespace {

constexpr uint32_t kMaxNativeFrames = 32;

// Something for the next statement boundary to do: samples to take (or, in a forked child, the
// clock to arm). Set by the handler, cleared by the statement wrapper, both on the interpreter's
// thread.
std::atomic<bool> g_due{false};
// The signals since the last statement boundary, each with the native frames it found
// (innermost first). A statement that runs long (a loop in one statement, a long XSUB) collects
// many; past the last slot, signals add their weight to it.
constexpr uint32_t kMaxPending = 256;
struct PendingSample {
  uint64_t weight;
  uint32_t native_count;
  uint64_t native[kMaxNativeFrames];
};
PendingSample g_pending[kMaxPending];
std::atomic<uint32_t> g_pending_count{0};
// Set in a forked child: the timer is armed at its first op, so that a child that only execs
// (system, backticks) never gets the signal.
std::atomic<bool> g_arm_in_child{false};

int g_signal = 0;
// The source of the signal: a perf_event task clock (the rate asked for), or where
// perf_event_open is refused a POSIX CPU-time timer (ticks at CONFIG_HZ, overruns as weight).
int g_perf_fd = -1;
timer_t g_timer;
bool g_timer_armed = false;
char g_timer_tag;  // its address tells our timer's signals from anyone else's

// The interpreter's code (the perl executable, libperl, this module): a native frame there is
// perl running ops, which the Perl frames already stand for.
struct CodeRange {
  uint64_t low = 0, high = 0;
};
CodeRange g_interpreter[3];
CodeRange g_loader;  // ld.so: never unwound from (it may hold the loader's lock)

bool In(const CodeRange& r, uint64_t pc) { return pc >= r.low && pc < r.high; }

bool InInterpreter(uint64_t pc) {
  for (const CodeRange& r : g_interpreter)
    if (In(r, pc)) return true;
  return false;
}

CodeRange RangeOf(const dl_phdr_info* info) {
  CodeRange r{UINT64_MAX, 0};
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    r.low = std::min<uint64_t>(r.low, info->dlpi_addr + ph.p_vaddr);
    r.high = std::max<uint64_t>(r.high, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  return r.high ? r : CodeRange{};
}

int OnImage(dl_phdr_info* info, size_t, void*) {
  CodeRange r = RangeOf(info);
  const char* name = info->dlpi_name ? info->dlpi_name : "";
  if (name[0] == '\0' && !g_interpreter[0].high) {
    g_interpreter[0] = r;  // the first image listed is the executable
  } else if (In(r, uint64_t(&Perl_runops_standard))) {
    g_interpreter[1] = r;
  } else if (In(r, uint64_t(&StartSampling))) {
    g_interpreter[2] = r;
  } else if (std::strstr(name, "/ld-linux")) {
    g_loader = r;
  }
  return 0;
}

void LocateInterpreter() { dl_iterate_phdr(OnImage, nullptr); }

void CaptureNative(void* ucontext, PendingSample* sample) {
  const auto* uc = static_cast<const ucontext_t*>(ucontext);
  uint64_t pc = uint64_t(uc->uc_mcontext.gregs[REG_RIP]);
  sample->native_count = 0;
  if (InInterpreter(pc)) return;
  sample->native[sample->native_count++] = pc;
  if (In(g_loader, pc)) return;
  unw_cursor_t cursor;
  if (unw_init_local2(&cursor, static_cast<unw_context_t*>(ucontext), UNW_INIT_SIGNAL_FRAME) < 0)
    return;
  while (sample->native_count < kMaxNativeFrames && unw_step(&cursor) > 0) {
    unw_word_t ip = 0;
    if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0 || InInterpreter(ip)) break;
    sample->native[sample->native_count++] = ip;
  }
}

void OnSampleSignal(int, siginfo_t* info, void* ucontext) {
  bool ours = info->si_code == SI_TIMER ? info->si_value.sival_ptr == &g_timer_tag
                                        : g_perf_fd >= 0 && info->si_fd == g_perf_fd;
  if (!ours) return;
  int saved = errno;
  uint64_t weight = 1 + uint64_t(info->si_overrun > 0 ? info->si_overrun : 0);
  uint32_t n = g_pending_count.load(std::memory_order_relaxed);
  if (n < kMaxPending) {
    g_pending[n].weight = weight;
    CaptureNative(ucontext, &g_pending[n]);
    std::atomic_signal_fence(std::memory_order_release);
    g_pending_count.store(n + 1, std::memory_order_relaxed);
  } else {
    g_pending[kMaxPending - 1].weight += weight;
  }
  g_due.store(true, std::memory_order_relaxed);
  errno = saved;
}

bool OpenPerfTaskClock() {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = g->period_ns;
  attr.disabled = 1;
  attr.exclude_hv = 1;
  attr.wakeup_events = 1;
  pid_t tid = pid_t(syscall(SYS_gettid));
  int fd = int(syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd < 0 && (errno == EACCES || errno == EPERM)) {
    attr.exclude_kernel = 1;
    fd = int(syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
  }
  if (fd < 0) return false;
  f_owner_ex owner{F_OWNER_TID, tid};
  g_perf_fd = fd;  // before the first signal can arrive
  if (fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) != 0 || fcntl(fd, F_SETSIG, g_signal) != 0 ||
      fcntl(fd, F_SETOWN_EX, &owner) != 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
    g_perf_fd = -1;
    close(fd);
    return false;
  }
  return true;
}

bool ArmPosixTimer() {
  sigevent ev;
  std::memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = g_signal;
  ev.sigev_value.sival_ptr = &g_timer_tag;
  ev._sigev_un._tid = pid_t(syscall(SYS_gettid));
  if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &g_timer) != 0) return false;
  itimerspec spec;
  spec.it_interval.tv_sec = time_t(g->period_ns / 1000000000u);
  spec.it_interval.tv_nsec = long(g->period_ns % 1000000000u);
  spec.it_value = spec.it_interval;
  if (timer_settime(g_timer, 0, &spec, nullptr) != 0) {
    timer_delete(g_timer);
    return false;
  }
  g_timer_armed = true;
  return true;
}

bool ArmSampler() {
  if (OpenPerfTaskClock()) {
    g->sampler_kind = fmt::Sampler::kPerfTaskClock;
    return true;
  }
  g->sampler_kind = fmt::Sampler::kPosixCpuTimer;
  return ArmPosixTimer();
}

// Where the program is now: the Perl subs on the context stacks, outermost first, each at the
// line it is at, then the native frames the signal found.
void TakeSample(pTHX) {
  g_due.store(false, std::memory_order_relaxed);
  // Copies the pending signals out. The handler runs on this thread and appends only: when the
  // count moved while copying, copy the rest too.
  static PendingSample taken[kMaxPending];
  uint32_t n = 0;
  for (;;) {
    uint32_t now = g_pending_count.load(std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_acquire);
    for (; n < now; ++n) taken[n] = g_pending[n];
    if (g_pending_count.compare_exchange_strong(now, 0, std::memory_order_relaxed)) break;
  }
  StartAtPhase(aTHX_ & g->main_thread, Ticks());
  if (n == 0 || !g->main_thread.on || !g->active || g->finished) return;
  // (sub, statement) from the innermost level out; cv nullptr is the main program.
  struct Level {
    CV* cv;
    const COP* cop;
  };
  Level levels[256];
  size_t depth = 0;
  const COP* cop = PL_curcop;
  for (const PERL_SI* si = PL_curstackinfo; si && depth < 255; si = si->si_prev) {
    for (I32 i = si->si_cxix; i >= 0 && depth < 255; --i) {
      const PERL_CONTEXT* cx = &si->si_cxstack[i];
      // Sort comparators called with MULTICALL are no calls, as in exact mode.
      if (CxTYPE(cx) != CXt_SUB || CxMULTICALL(cx)) continue;
      levels[depth++] = Level{cx->blk_sub.cv, cop};
      cop = cx->blk_oldcop;
    }
  }
  levels[depth++] = Level{nullptr, cop};
  uint32_t perl_node = 0;
  for (size_t i = depth; i-- > 0;) {
    const Level& level = levels[i];
    uint32_t sub = level.cv ? SubIndex(aTHX_ level.cv) : 0;
    uint32_t file = UINT32_MAX;
    uint64_t line = 0;
    if (level.cop) {
      const char* name = CopFILE(level.cop);
      file = FileIndex(name ? name : "");
      if (g->files[file].text.empty()) CaptureSourceText(aTHX_ file);
      line = CopLINE(level.cop);
    }
    perl_node = NodeIndex(perl_node, FrameIndex(sub, file, line));
  }
  for (uint32_t k = 0; k < n; ++k) {
    uint32_t node = perl_node;
    for (uint32_t i = taken[k].native_count; i-- > 0;)
      node = NativeNodeIndex(node, taken[k].native[i]);
    WriteSample(node, taken[k].weight);
  }
  if (Ticks() > g->main_thread.flush_deadline) Flush(&g->main_thread);
}

Perl_ppaddr_t g_pp_exec = nullptr;
Perl_ppaddr_t g_pp_nextstate = nullptr;
Perl_ppaddr_t g_pp_dbstate = nullptr;

// A sample is due (or, in a forked child, the clock is to be armed, or a fatal signal came).
void OnDue(pTHX) {
  if (__builtin_expect(g_fatal_signal.load(std::memory_order_relaxed), 0)) TakeFatalSignal();
  if (my_perl != g->interp) return;
  if (g_arm_in_child.exchange(false, std::memory_order_relaxed)) {
    g_due.store(false, std::memory_order_relaxed);
    BeginForkedChild();
    if (g->active) ArmSampler();
  } else {
    TakeSample(aTHX);
  }
}

// Statement boundaries: the statement that was running is still PL_curcop here.
OP* PpNextstate(pTHX) {
  if (__builtin_expect(g_due.load(std::memory_order_relaxed), 0)) OnDue(aTHX);
  return g_pp_nextstate(aTHX);
}

OP* PpDbstate(pTHX) {
  if (__builtin_expect(g_due.load(std::memory_order_relaxed), 0)) OnDue(aTHX);
  return g_pp_dbstate(aTHX);
}

// exec replaces the process: what was sampled is written first, and the timer goes, so that
// no signal of ours reaches the new program.
OP* PpExec(pTHX) {
  if (g->active && !g->finished) Flush(&g->main_thread);
  StopSamplingTimer();
  g_due.store(false, std::memory_order_relaxed);
  OP* next = g_pp_exec(aTHX);
  if (g->active && !g->finished) ArmSampler();  // exec failed: the program goes on
  return next;
}

}  // namespace

bool StartSampling(pTHX_ uint64_t period_ns) {
  g->period_ns = period_ns;
  LocateInterpreter();
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  g_signal = FreeRealtimeSignal(::sigaction);
  if (!g_signal) return false;
  struct sigaction act;
  std::memset(&act, 0, sizeof act);
  act.sa_sigaction = OnSampleSignal;
  act.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&act.sa_mask);
  if (sigaction(g_signal, &act, nullptr) != 0) return false;
  if (!ArmSampler()) {
    int saved = errno;
    act.sa_handler = SIG_DFL;
    act.sa_flags = 0;
    sigaction(g_signal, &act, nullptr);
    errno = saved;
    return false;
  }
  // Ops compiled from here on (the program's) call the wrappers; perl's own runops loop runs
  // them, so ops between statements cost nothing more.
  g_pp_exec = PL_ppaddr[OP_EXEC];
  PL_ppaddr[OP_EXEC] = PpExec;
  g_pp_nextstate = PL_ppaddr[OP_NEXTSTATE];
  PL_ppaddr[OP_NEXTSTATE] = PpNextstate;
  g_pp_dbstate = PL_ppaddr[OP_DBSTATE];
  PL_ppaddr[OP_DBSTATE] = PpDbstate;
  return true;
}

void StopSamplingTimer() {
  if (g_perf_fd >= 0) {
    int fd = g_perf_fd;
    g_perf_fd = -1;
    close(fd);
  }
  if (g_timer_armed) {
    timer_delete(g_timer);
    g_timer_armed = false;
  }
}

void RearmSamplingTimerInChild() {
  // The parent's timer is not inherited, its perf event counts the parent's thread, and its due
  // samples are the parent's.
  if (g_perf_fd >= 0) {
    close(g_perf_fd);
    g_perf_fd = -1;
  }
  g_timer_armed = false;
  g_pending_count.store(0, std::memory_order_relaxed);
  g_arm_in_child.store(true, std::memory_order_relaxed);
  g_due.store(true, std::memory_order_relaxed);  // the next statement arms it
}

void NoteFatalSignal() { g_due.store(true, std::memory_order_relaxed); }

}  // namespace hotline::perl

#include "runtime/threads.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runtime/descriptors.h"
#include "runtime/modules.h"
#include "runtime/session.h"
#include "runtime/watch.h"

namespace hotline::rt {

ThreadSlot g_slots[kMaxThreads];
std::atomic<int> g_slots_used{0};

std::span<ThreadSlot> UsedSlots() {
  return std::span<ThreadSlot>(g_slots, size_t(g_slots_used.load(std::memory_order_acquire)));
}

namespace {

// Marks timer signals as ours (si_value) so foreign timers on the same signal are chained.
int g_timer_tag;

__thread ThreadSlot* t_slot __attribute__((tls_model("initial-exec"))) = nullptr;

// The alternate signal stack the runtime gave this thread, and whether it is still the one
// installed (the program may install its own over it).
__thread void* t_alt_stack __attribute__((tls_model("initial-exec"))) = nullptr;
__thread bool t_alt_stack_installed __attribute__((tls_model("initial-exec"))) = false;
// Room for the fatal-signal handler, which writes the profile when the thread's own stack is
// full (a stack overflow); only the pages it touches are ever backed.
constexpr size_t kAltStackBytes = 256 * 1024;
constexpr size_t kGuardBytes = 4096;

using SigaltstackFn = int (*)(const stack_t*, stack_t*);
SigaltstackFn RealSigaltstack() {
  static auto fn = reinterpret_cast<SigaltstackFn>(dlsym(RTLD_NEXT, "sigaltstack"));
  return fn;
}

// Gives the calling thread an alternate signal stack unless it has one.
void InstallAltStack() {
  SigaltstackFn real = RealSigaltstack();
  stack_t current;
  if (!real || real(nullptr, &current) != 0 || !(current.ss_flags & SS_DISABLE)) return;
  void* mem = mmap(nullptr, kAltStackBytes + kGuardBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (mem == MAP_FAILED) return;
  mprotect(mem, kGuardBytes, PROT_NONE);  // an overflow of the handler faults, not corrupts
  stack_t ss;
  ss.ss_sp = static_cast<char*>(mem) + kGuardBytes;
  ss.ss_size = kAltStackBytes;
  ss.ss_flags = 0;
  if (real(&ss, nullptr) != 0) {
    munmap(mem, kAltStackBytes + kGuardBytes);
    return;
  }
  t_alt_stack = mem;
  t_alt_stack_installed = true;
}

// At the thread's end: takes the runtime's stack down (and frees it).
void RemoveAltStack() {
  if (!t_alt_stack) return;
  if (t_alt_stack_installed) {
    stack_t off;
    off.ss_sp = nullptr;
    off.ss_size = 0;
    off.ss_flags = SS_DISABLE;
    if (RealSigaltstack()(&off, nullptr) != 0) return;  // running on it: leave it be
  }
  munmap(t_alt_stack, kAltStackBytes + kGuardBytes);
  t_alt_stack = nullptr;
  t_alt_stack_installed = false;
}

// The kernel's CPU clock id for one thread of this process (MAKE_THREAD_CPUCLOCK).
clockid_t ThreadCpuClock(pid_t tid) { return clockid_t((~unsigned(tid) << 3) | 4 | 2); }

int OpenPerfTaskClock(pid_t tid, uint64_t period_ns, bool exclude_kernel) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = period_ns;
  attr.disabled = 1;
  attr.exclude_kernel = exclude_kernel;
  attr.exclude_hv = 1;
  attr.wakeup_events = 1;
  return int(syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

bool ArmPerf(ThreadSlot* slot);

// The program is about to dup2 onto a thread's perf event: the kernel closes the event, so the
// thread gets a new one.
void OnPerfEventLost(int fd) {
  for (ThreadSlot& s : UsedSlots()) {
    if (s.perf_fd != fd) continue;
    s.perf_fd = -1;
    if (s.state.load(std::memory_order_acquire) == int(SlotState::kActive)) ArmPerf(&s);
    return;
  }
}

bool ArmPerf(ThreadSlot* slot) {
  uint64_t period = g_session.config.periodNs();
  // Moved high before O_ASYNC: the signal's si_fd is the number the descriptor had then.
  int fd = CreateOwned(
      [&] {
        int event = OpenPerfTaskClock(slot->tid, period, false);
        if (event < 0 && (errno == EACCES || errno == EPERM))
          event = OpenPerfTaskClock(slot->tid, period, true);
        return event;
      },
      OnPerfEventLost);
  if (fd < 0) return false;
  f_owner_ex owner{F_OWNER_TID, slot->tid};
  uint64_t id = 0;
  if (fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) != 0 ||
      fcntl(fd, F_SETSIG, g_session.sample_signal) != 0 || fcntl(fd, F_SETOWN_EX, &owner) != 0 ||
      ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
    CloseOwnDescriptor(fd);
    return false;
  }
  slot->perf_id = id;
  slot->perf_fd = fd;
  return true;
}

// Closes a thread's perf event, unless a raw close by the program has put something else at
// its number (then the number is the program's, and is left alone).
void ClosePerfEvent(ThreadSlot* slot) {
  int fd = slot->perf_fd;
  slot->perf_fd = -1;
  uint64_t id = 0;
  if (ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0 && id == slot->perf_id) {
    CloseOwnDescriptor(fd);
  } else {
    ForgetDescriptor(fd);
  }
}

bool ArmPosixTimer(ThreadSlot* slot, clockid_t clock) {
  sigevent ev;
  std::memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = g_session.sample_signal;
  ev.sigev_value.sival_ptr = &g_timer_tag;
  ev._sigev_un._tid = slot->tid;
  timer_t timer;
  if (timer_create(clock, &ev, &timer) != 0) return false;
  uint64_t period = g_session.config.periodNs();
  itimerspec spec;
  spec.it_interval.tv_sec = time_t(period / 1000000000u);
  spec.it_interval.tv_nsec = long(period % 1000000000u);
  spec.it_value = spec.it_interval;
  if (timer_settime(timer, 0, &spec, nullptr) != 0) {
    timer_delete(timer);
    return false;
  }
  slot->timer = timer;
  slot->has_timer = true;
  return true;
}

}  // namespace

bool IsOurTimerSignal(const siginfo_t* info) {
  return info->si_code == SI_TIMER && info->si_value.sival_ptr == &g_timer_tag;
}

pid_t GetTid() { return pid_t(syscall(SYS_gettid)); }

ThreadSlot* CurrentSlot() {
  ThreadSlot* slot = t_slot;
  if (slot) return slot;
  // Threads that existed before the runtime started have a slot but no TLS pointer yet.
  pid_t tid = GetTid();
  for (ThreadSlot& s : UsedSlots()) {
    if (s.state.load(std::memory_order_acquire) == int(SlotState::kActive) && s.tid == tid) {
      t_slot = &s;
      return &s;
    }
  }
  return nullptr;
}

bool StartTimer(ThreadSlot* slot) {
  if (!g_session.config.sampling() || g_session.config.kernel_sampler) return true;
  if (g_session.config.clock == format::ClockMode::kWall)
    return ArmPosixTimer(slot, CLOCK_MONOTONIC);
  if (g_session.sampler != format::Sampler::kPosixCpuTimer && ArmPerf(slot)) return true;
  return ArmPosixTimer(slot, ThreadCpuClock(slot->tid));
}

void StopTimer(ThreadSlot* slot) {
  DisarmThreadWatches(slot);
  if (slot->perf_fd >= 0) {
    // Closing the descriptor may not end the event: a child forked a moment ago holds a copy
    // until it closes its own, and the event would go on counting this thread through an exec,
    // whose new program dies of the next sampling signal. Stopped first, it sends none.
    uint64_t id = 0;
    if (ioctl(slot->perf_fd, PERF_EVENT_IOC_ID, &id) == 0 && id == slot->perf_id) {
      ioctl(slot->perf_fd, PERF_EVENT_IOC_DISABLE, 0);
      fcntl(slot->perf_fd, F_SETFL, O_NONBLOCK);
    }
    ClosePerfEvent(slot);
  }
  if (slot->has_timer) {
    timer_delete(slot->timer);
    slot->has_timer = false;
  }
}

// Whether the program brings its own malloc: then what glibc allocates for the runtime goes to
// it, and the runtime keeps away from the glibc calls that allocate.
bool ProgramDefinesMalloc() {
  static const bool defines = [] {
    void* global = dlsym(RTLD_DEFAULT, "malloc");
    return global && !IsRuntimeCode(global) && global != dlsym(RTLD_NEXT, "malloc");
  }();
  return defines;
}

// The mapping of /proc/self/maps that holds `address`, and where the one below it ends, read
// with plain system calls (fopen and getline allocate).
bool MappingHolding(uint64_t address, uint64_t* start, uint64_t* end, uint64_t* below_end) {
  int fd = OpenOwned("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buffer[4096];
  size_t held = 0;
  uint64_t previous_end = 0;
  bool found = false;
  for (bool more = true; more && !found;) {
    ssize_t n = read(fd, buffer + held, sizeof buffer - held);
    more = n > 0;
    if (n > 0) held += size_t(n);
    size_t line_start = 0;
    for (size_t i = 0; i < held && !found; ++i) {
      if (buffer[i] != '\n') continue;
      char* text = buffer + line_start;
      uint64_t from = std::strtoull(text, &text, 16);
      uint64_t to = *text == '-' ? std::strtoull(text + 1, nullptr, 16) : 0;
      if (from <= address && address < to) {
        *start = from;
        *end = to;
        *below_end = previous_end;
        found = true;
      }
      previous_end = to;
      line_start = i + 1;
    }
    std::memmove(buffer, buffer + line_start, held - line_start);
    held -= line_start;
    if (held == sizeof buffer) held = 0;  // a line longer than the buffer: not a stack's
  }
  CloseOwnDescriptor(fd);
  return found;
}

// The calling thread's stack. glibc's pthread_getattr_np allocates (its affinity mask, and
// for the main thread fopen and getline of /proc/self/maps): for the main thread, and for
// every thread of a program with its own malloc, the stack is the mapping that holds the stack
// pointer, below which the main thread's may grow to its limit.
StackBounds ThisThreadsStack() {
  StackBounds bounds;
  uint64_t sp = uint64_t(__builtin_frame_address(0));
  if (GetTid() == getpid() || ProgramDefinesMalloc()) {
    uint64_t start = 0, end = 0, below_end = 0;
    if (!MappingHolding(sp, &start, &end, &below_end)) return bounds;
    bounds.high = end;
    bounds.low = start;
    rlimit limit;
    if (GetTid() == getpid() && getrlimit(RLIMIT_STACK, &limit) == 0) {
      uint64_t room =
          limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > end ? end : limit.rlim_cur;
      bounds.low = std::max(end - room, below_end);
    }
    return bounds;
  }
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* addr;
    size_t size;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
      bounds.low = uint64_t(addr);
      bounds.high = uint64_t(addr) + size;
    }
    pthread_attr_destroy(&attr);
  }
  return bounds;
}

ThreadSlot* RegisterThread(pid_t tid, bool self) {
  for (ThreadSlot& s : g_slots) {
    int expected = int(SlotState::kFree);
    if (!s.state.compare_exchange_strong(expected, -1)) continue;  // -1: being set up
    int used = int(&s - g_slots) + 1;
    for (int seen = g_slots_used.load(); seen < used;)
      if (g_slots_used.compare_exchange_weak(seen, used)) break;
    s.tid = tid;
    s.dropped.store(0);
    s.in_handler = 0;
    if (!s.ring.ready() && !s.ring.init(g_session.config.max_depth)) {
      s.state.store(int(SlotState::kFree));
      return nullptr;
    }
    s.ring.discard();
    s.bounds = StackBounds{};
    if (self) {
      s.bounds = ThisThreadsStack();
      t_slot = &s;
      InstallAltStack();
    }
    s.state.store(int(SlotState::kActive), std::memory_order_release);
    if (!StartTimer(&s)) {
      RecordDisabled("could not start a sampling timer for a thread");
    }
    ArmThreadWatches(&s);
    return &s;
  }
  return nullptr;
}

void RetireSlot(ThreadSlot* slot) {
  StopTimer(slot);
  if (t_slot == slot) {
    t_slot = nullptr;
    RemoveAltStack();
  }
  slot->state.store(int(SlotState::kExited), std::memory_order_release);
}

void ResetSlotsAfterFork() {
  ThreadSlot* mine = t_slot;
  for (ThreadSlot& s : UsedSlots()) {
    // Free slots are only read: writing to them would copy their pages from the parent.
    if (s.state.load(std::memory_order_relaxed) == int(SlotState::kFree)) continue;
    if (s.perf_fd >= 0) ClosePerfEvent(&s);  // the parent's events: not ours to keep
    s.has_timer = false;                     // POSIX timers are not inherited by fork
    s.ring.discard();
    if (&s != mine) s.state.store(int(SlotState::kFree));
  }
  if (mine) {
    mine->tid = GetTid();
    mine->dropped.store(0);
    if (!StartTimer(mine)) RecordDisabled("could not start a sampling timer after fork");
  }
}

int ProgramSigaltstack(const stack_t* ss, stack_t* old) {
  SigaltstackFn real = RealSigaltstack();
  if (!real) {
    errno = ENOSYS;
    return -1;
  }
  if (!t_alt_stack_installed) return real(ss, old);
  // The runtime's stack is installed and the program has none of its own: that is what it sees.
  if (old) {
    old->ss_sp = nullptr;
    old->ss_size = 0;
    old->ss_flags = SS_DISABLE;
  }
  if (!ss || (ss->ss_flags & SS_DISABLE)) return 0;  // disabling a stack it never had
  int result = real(ss, nullptr);
  if (result == 0) t_alt_stack_installed = false;  // the program's own from now on
  return result;
}

namespace {

// Whether thread `tid` blocks the sampling signal, from /proc (SigBlk is a hex mask).
bool SampleSignalBlocked(pid_t tid) {
  char path[64], text[2048];
  snprintf(path, sizeof path, "/proc/self/task/%d/status", int(tid));
  int fd = OpenOwned(path, O_RDONLY);
  if (fd < 0) return false;
  ssize_t n = read(fd, text, sizeof text - 1);
  CloseOwnDescriptor(fd);
  if (n <= 0) return false;
  text[n] = '\0';
  const char* line = strstr(text, "SigBlk:");
  if (!line) return false;
  unsigned long long mask = strtoull(line + 7, nullptr, 16);
  return (mask >> (g_session.sample_signal - 1)) & 1u;
}

}  // namespace

uint64_t WatchBlockedThreads() {
  if (g_session.sampler != format::Sampler::kPerfTaskClock) return 0;
  uint64_t period = g_session.config.periodNs();
  uint64_t paused = 0;
  for (ThreadSlot& s : UsedSlots()) {
    if (s.state.load(std::memory_order_acquire) != int(SlotState::kActive) || s.perf_fd < 0)
      continue;
    if (s.muted) {
      if (!SampleSignalBlocked(s.tid) && ioctl(s.perf_fd, PERF_EVENT_IOC_ENABLE, 0) == 0) {
        s.muted = false;
        s.watch_baseline = false;
      }
      continue;
    }
    uint64_t delivered = s.delivered.load(std::memory_order_relaxed);
    if (delivered != s.watch_delivered) {  // samples arrive: nothing to watch
      s.watch_delivered = delivered;
      s.watch_baseline = false;
      continue;
    }
    uint64_t cpu_ns = 0;
    if (read(s.perf_fd, &cpu_ns, sizeof cpu_ns) != ssize_t(sizeof cpu_ns)) continue;
    if (!s.watch_baseline) {
      s.watch_cpu_ns = cpu_ns;
      s.watch_baseline = true;
      continue;
    }
    if (cpu_ns - s.watch_cpu_ns < 4 * period) continue;
    s.watch_cpu_ns = cpu_ns;
    if (SampleSignalBlocked(s.tid) && ioctl(s.perf_fd, PERF_EVENT_IOC_DISABLE, 0) == 0) {
      s.muted = true;
      ++paused;
    }
  }
  return paused;
}

uint64_t SlotCpuNs(const ThreadSlot& slot) {
  uint64_t cpu_ns = ThreadCpuNs(slot.tid);
  if (cpu_ns != format::kCpuUnknown || slot.perf_fd < 0) return cpu_ns;
  // The thread is gone; its task-clock event still holds what it ran since it was registered.
  uint64_t counted = 0;
  if (read(slot.perf_fd, &counted, sizeof counted) == ssize_t(sizeof counted)) return counted;
  return format::kCpuUnknown;
}

uint64_t ThreadCpuNs(pid_t tid) {
  timespec ts;
  if (clock_gettime(ThreadCpuClock(tid), &ts) != 0) return format::kCpuUnknown;
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

}  // namespace hotline::rt

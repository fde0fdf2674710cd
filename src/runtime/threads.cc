#include "runtime/threads.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/session.h"

namespace hotline::rt {

ThreadSlot g_slots[kMaxThreads];

namespace {

// Marks timer signals as ours (si_value) so foreign timers on the same signal are chained.
int g_timer_tag;

__thread ThreadSlot* t_slot __attribute__((tls_model("initial-exec"))) = nullptr;

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

bool ArmPerf(ThreadSlot* slot) {
  uint64_t period = g_session.config.periodNs();
  int fd = OpenPerfTaskClock(slot->tid, period, false);
  if (fd < 0 && (errno == EACCES || errno == EPERM))
    fd = OpenPerfTaskClock(slot->tid, period, true);
  if (fd < 0) return false;
  f_owner_ex owner{F_OWNER_TID, slot->tid};
  if (fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) != 0 ||
      fcntl(fd, F_SETSIG, g_session.sample_signal) != 0 || fcntl(fd, F_SETOWN_EX, &owner) != 0 ||
      ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
    close(fd);
    return false;
  }
  slot->perf_fd = fd;
  return true;
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
  for (ThreadSlot& s : g_slots) {
    if (s.state.load(std::memory_order_acquire) == int(SlotState::kActive) && s.tid == tid) {
      t_slot = &s;
      return &s;
    }
  }
  return nullptr;
}

bool StartTimer(ThreadSlot* slot) {
  if (!g_session.config.sampling()) return true;
  if (g_session.config.clock == format::ClockMode::kWall)
    return ArmPosixTimer(slot, CLOCK_MONOTONIC);
  if (g_session.sampler != format::Sampler::kPosixCpuTimer && ArmPerf(slot)) return true;
  return ArmPosixTimer(slot, ThreadCpuClock(slot->tid));
}

void StopTimer(ThreadSlot* slot) {
  if (slot->perf_fd >= 0) {
    close(slot->perf_fd);
    slot->perf_fd = -1;
  }
  if (slot->has_timer) {
    timer_delete(slot->timer);
    slot->has_timer = false;
  }
}

ThreadSlot* RegisterThread(pid_t tid, bool self) {
  for (ThreadSlot& s : g_slots) {
    int expected = int(SlotState::kFree);
    if (!s.state.compare_exchange_strong(expected, -1)) continue;  // -1: being set up
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
      pthread_attr_t attr;
      if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        void* addr;
        size_t size;
        if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
          s.bounds.low = uint64_t(addr);
          s.bounds.high = uint64_t(addr) + size;
        }
        pthread_attr_destroy(&attr);
      }
      t_slot = &s;
    }
    s.state.store(int(SlotState::kActive), std::memory_order_release);
    if (!StartTimer(&s)) {
      RecordDisabled("could not start a sampling timer for a thread");
    }
    return &s;
  }
  return nullptr;
}

void RetireSlot(ThreadSlot* slot) {
  StopTimer(slot);
  if (t_slot == slot) t_slot = nullptr;
  slot->state.store(int(SlotState::kExited), std::memory_order_release);
}

void ResetSlotsAfterFork() {
  ThreadSlot* mine = t_slot;
  for (ThreadSlot& s : g_slots) {
    if (s.perf_fd >= 0) {
      close(s.perf_fd);  // the parent's events: not ours to keep
      s.perf_fd = -1;
    }
    s.has_timer = false;  // POSIX timers are not inherited by fork
    s.ring.discard();
    if (&s != mine) s.state.store(int(SlotState::kFree));
  }
  if (mine) {
    mine->tid = GetTid();
    mine->dropped.store(0);
    if (!StartTimer(mine)) RecordDisabled("could not start a sampling timer after fork");
  }
}

uint64_t ThreadCpuNs(pid_t tid) {
  timespec ts;
  if (clock_gettime(ThreadCpuClock(tid), &ts) != 0) return 0;
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

}  // namespace hotline::rt

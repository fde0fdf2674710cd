#include "runtime/descriptors.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <ctime>

namespace hotline::rt {
namespace {

constexpr int kMaxOwned = 2048;  // a profile and one perf event per thread slot, with room

struct Owned {
  std::atomic<int> fd{-1};  // -1 free, -2 being filled
  DescriptorLost lost = nullptr;
};
Owned g_owned[kMaxOwned];

// The lowest number descriptors move to: half the soft limit, so the low numbers that open()
// hands out (and that daemons expect for 0, 1, 2 after closing everything) stay the program's.
int HighWater() {
  rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 512;
  rlim_t half = limit.rlim_cur / 2;
  return half < 10 ? 10 : half > 1000 ? 1000 : int(half);
}

// Readers are the program's calls (many at once, reader-preferring so that one of them inside a
// signal handler on a thread already reading never waits); the writer is the runtime creating.
pthread_rwlock_t g_creating = PTHREAD_RWLOCK_INITIALIZER;
// This thread holds the lock already: the runtime's code its close calls must not wait for it,
// nor a runtime signal handler that interrupted a program call inside it.
thread_local int t_creating = 0;
thread_local int t_program_calls = 0;
// A program call stuck in close() (a socket lingering, a file system gone) must not stop the
// runtime for ever: after this long it creates its descriptor anyway.
constexpr long kCreateWaitNs = 1000000000;

Owned* Find(int fd) {
  if (fd < 0) return nullptr;
  for (Owned& o : g_owned)
    if (o.fd.load(std::memory_order_acquire) == fd) return &o;
  return nullptr;
}

}  // namespace

int AdoptDescriptor(int fd, DescriptorLost lost) {
  if (fd < 0) return fd;
  int high = fcntl(fd, F_DUPFD_CLOEXEC, HighWater());
  if (high >= 0) {
    syscall(SYS_close, fd);
    fd = high;
  }
  for (Owned& o : g_owned) {
    int expected = -1;
    if (o.fd.compare_exchange_strong(expected, -2)) {
      o.lost = lost;
      o.fd.store(fd, std::memory_order_release);
      break;
    }
  }
  return fd;
}

bool IsOwnDescriptor(int fd) { return Find(fd) != nullptr; }

bool OwnDescriptorIn(unsigned first, unsigned last) {
  for (Owned& o : g_owned) {
    int fd = o.fd.load(std::memory_order_acquire);
    if (fd >= 0 && unsigned(fd) >= first && unsigned(fd) <= last) return true;
  }
  return false;
}

void ForgetDescriptor(int fd) {
  if (Owned* o = Find(fd)) o->fd.store(-1, std::memory_order_release);
}

void CloseOwnDescriptor(int fd) {
  if (fd < 0) return;
  ForgetDescriptor(fd);
  syscall(SYS_close, fd);
}

void HandOverDescriptor(int fd) {
  Owned* o = Find(fd);
  if (!o) return;
  DescriptorLost lost = o->lost;
  o->fd.store(-1, std::memory_order_release);
  if (lost) lost(fd);
}

CreatingDescriptor::CreatingDescriptor() : locked_(false) {
  if (t_creating++ > 0 || t_program_calls > 0) return;
  timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_sec += kCreateWaitNs / 1000000000;
  locked_ = pthread_rwlock_clockwrlock(&g_creating, CLOCK_MONOTONIC, &until) == 0;
}

CreatingDescriptor::~CreatingDescriptor() {
  --t_creating;
  if (locked_) pthread_rwlock_unlock(&g_creating);
}

ProgramDescriptorCall::ProgramDescriptorCall() : locked_(false) {
  if (t_creating > 0) return;
  int err = errno;
  locked_ = pthread_rwlock_rdlock(&g_creating) == 0;
  if (locked_) ++t_program_calls;
  errno = err;
}

ProgramDescriptorCall::~ProgramDescriptorCall() {
  if (!locked_) return;
  --t_program_calls;
  int err = errno;
  pthread_rwlock_unlock(&g_creating);
  errno = err;
}

void ResetDescriptorLockAfterFork() { pthread_rwlock_init(&g_creating, nullptr); }

int OpenOwned(const char* path, int flags, mode_t mode) {
  return CreateOwned(
      [&] { return int(syscall(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC, mode)); }, nullptr);
}

int CloseRangeExceptOwn(unsigned first, unsigned last, int flags) {
  // The gaps between the runtime's descriptors, lowest first.
  unsigned from = first;
  for (;;) {
    unsigned next_own = last;
    bool own_ahead = false;
    for (Owned& o : g_owned) {
      int fd = o.fd.load(std::memory_order_acquire);
      if (fd >= 0 && unsigned(fd) >= from && unsigned(fd) <= last &&
          (!own_ahead || unsigned(fd) < next_own)) {
        next_own = unsigned(fd);
        own_ahead = true;
      }
    }
    if (!own_ahead) return int(syscall(SYS_close_range, from, last, flags));
    if (next_own > from) {
      long r = syscall(SYS_close_range, from, next_own - 1u, flags);
      if (r != 0) return int(r);
    }
    if (next_own == last) return 0;
    from = next_own + 1u;
  }
}

}  // namespace hotline::rt

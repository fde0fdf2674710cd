#include "runtime/descriptors.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

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

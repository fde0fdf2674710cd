// A clock's reading in nanoseconds, for the tools (the runtime keeps its own, signal-safe).
#pragma once

#include <time.h>

#include <cstdint>

namespace hotline {

inline uint64_t ClockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

}  // namespace hotline

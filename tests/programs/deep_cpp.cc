// Deep C++ stacks, as template-heavy code makes them, for the kernel sampler's unwinding:
//   deep_cpp chain [N] 120 distinct functions of 300 to 450 bytes of frame each between main
//                      and the work (about 45 KiB of stack): within what the kernel copies; for
//                      0.6 s of CPU, or N times through the chain
//   deep_cpp abyss N   a recursion N frames deep of 600 bytes each before the work: past any
//                      copy once N is above about 110
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "burn.h"

__attribute__((noinline)) static double Work(double x, int rounds = 20000) {
  for (int i = 0; i < rounds; ++i) x = x * 1.0000001 + 0.5;
  return x;
}

template <int N>
struct Level {
  __attribute__((noinline)) static double Run(double x, int k) {
    volatile char pad[256 + (N % 5) * 48];
    memset(const_cast<char*>(pad), N, sizeof pad);
    double r = Level<N - 1>::Run(x + pad[N % 7], k);
    if (k % (N + 1) == 0) r += Work(r);
    return r + pad[3];
  }
};
template <>
struct Level<0> {
  __attribute__((noinline)) static double Run(double x, int) { return Work(x); }
};

__attribute__((noinline)) static double Abyss(int depth, double x) {
  volatile char pad[600];
  memset(const_cast<char*>(pad), depth, sizeof pad);
  double r = depth > 0 ? Abyss(depth - 1, x + pad[depth % 600]) : Work(x, 400000);  // the descent is a small part
  return r + pad[1];
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "chain";
  double end = thread_cpu_seconds() + 0.6, s = 0;
  if (std::strcmp(mode, "abyss") == 0) {
    int depth = argc > 2 ? std::atoi(argv[2]) : 300;
    for (int k = 0; thread_cpu_seconds() < end; ++k) s += Abyss(depth, s);
  } else if (argc > 2) {  // a fixed amount of work, for benchmarks: its CPU time is the cost
    for (int k = 0, n = std::atoi(argv[2]); k < n; ++k) s += Level<120>::Run(s, k);
  } else {
    for (int k = 0; thread_cpu_seconds() < end; ++k) s += Level<120>::Run(s, k);
  }
  std::printf("%s done %d\n", mode, s > 0);
  return 0;
}

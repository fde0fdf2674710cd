// Two call paths of equal depth and equal frames, taken in turn at random: main → PathA<60> →
// ... → PathA<0> and main → PathB<60> → ... → PathB<0>, each level 400 bytes of frame (24 KiB
// of stack), the program switching every few hundred microseconds, at random. A sample's stack is one path
// or the other, never a part of each: an unwinder that reused the outer part of an earlier
// stack without proving it unchanged would join them. Prints a line that does not depend on
// timing.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace {

double ThreadCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

__attribute__((noinline)) double Spin(double x) {
  for (int i = 0; i < 3000; ++i) x = x * 1.0000001 + 0.25;
  return x;
}

template <int N>
struct PathA {
  __attribute__((noinline)) static double Run(double x) {
    volatile char pad[400];
    memset(const_cast<char*>(pad), N, sizeof pad);
    return PathA<N - 1>::Run(x + pad[N % 13]) + pad[7];
  }
};
template <>
struct PathA<0> {
  __attribute__((noinline)) static double Run(double x) { return Spin(x); }
};

template <int N>
struct PathB {
  __attribute__((noinline)) static double Run(double x) {
    volatile char pad[400];
    memset(const_cast<char*>(pad), N, sizeof pad);
    return PathB<N - 1>::Run(x - pad[N % 11]) + pad[5];
  }
};
// Not the same code as PathA<0>'s, which GCC would fold into one function (-fipa-icf) with one
// name for both paths.
template <>
struct PathB<0> {
  __attribute__((noinline)) static double Run(double x) { return Spin(x) + 1; }
};

}  // namespace

int main() {
  unsigned seed = 27;
  double s = 0, end = ThreadCpuSeconds() + 0.8;
  long a = 0, b = 0;
  while (ThreadCpuSeconds() < end) {  // a system call: read once every 32 paths
    for (int k = 0; k < 32; ++k) {
      if (rand_r(&seed) & 1) {
        s += PathA<60>::Run(s), ++a;
      } else {
        s += PathB<60>::Run(s), ++b;
      }
    }
  }
  std::printf("two_paths %d\n", a > 0 && b > 0 && s != 0);
  return 0;
}

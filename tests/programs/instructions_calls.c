// Two callers of one costly function, each calling it from a line that also holds a condition:
// `rare` runs its line 10,000 times and calls 100 times, `often` runs its line 1,000 times and
// calls 500 times. The lines alone would charge the callee's cost to its callers ten to one;
// traced calls (instructions_test) charge it one to five, as it was.
#include <stdio.h>

__attribute__((noinline)) long heavy(long n) {
  long s = 0;
  for (long i = 0; i < n; i++) s += i * i % 7;
  return s;
}

// clang-format off
__attribute__((noinline)) long rare(long i) { return i % 100 == 0 ? heavy(1000) : i; }
__attribute__((noinline)) long often(long i) { return i % 2 == 0 ? heavy(1000) : i; }
// clang-format on

int main(void) {
  long t = 0;
  for (long i = 0; i < 10000; i++) t += rare(i);
  for (long i = 0; i < 1000; i++) t += often(i);
  printf("%ld\n", t);
  return 0;
}

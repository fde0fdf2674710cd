/* spin() burns a known CPU time per call (2 ms of this thread's CPU clock), so timed tracing
 * must report an average call of about 2 ms; outer() calls it and adds almost nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Not instrumented: spin() must call nothing traced, so its self time is its whole time. */
__attribute__((no_instrument_function)) static double thread_cpu_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

__attribute__((noinline)) void spin(double ms) {
  double start = thread_cpu_ms();
  while (thread_cpu_ms() - start < ms) {
  }
}

__attribute__((noinline)) void outer(int calls) {
  for (int i = 0; i < calls; ++i) spin(2.0);
}

int main(int argc, char** argv) {
  int calls = argc > 1 ? atoi(argv[1]) : 25;
  outer(calls);
  printf("spun %d times\n", calls);
  return 0;
}

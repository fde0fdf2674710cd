/* spin() takes a known time per call, 2 ms of elapsed time (the clock timed tracing measures,
 * so a busy machine does not change it), so timed tracing must report an average call of about
 * 2 ms; outer() calls it and adds almost nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Not instrumented: spin() must call nothing traced, so its self time is its whole time. */
__attribute__((no_instrument_function)) static double elapsed_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

__attribute__((noinline)) void spin(double ms) {
  double start = elapsed_ms();
  while (elapsed_ms() - start < ms) {
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

/* Spins on the calling thread's CPU clock, so the CPU time a function uses is known in advance
 * whatever the machine's speed. Shared by the test programs. */
#ifndef HOTLINE_TEST_BURN_H
#define HOTLINE_TEST_BURN_H

#include <time.h>

static double thread_cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Burns `seconds` of this thread's CPU time; returns a value so the work is not optimised out. */
__attribute__((unused)) static double burn_cpu(double seconds) {
  double x = 0;
  double end = thread_cpu_seconds() + seconds;
  while (thread_cpu_seconds() < end)
    for (int i = 0; i < 2000; ++i) {
      x += i * 0.5;
      __asm__ volatile("" : "+g"(x));
    }
  __asm__ volatile("" : : "g"(x) : "memory"); /* keep the work */
  return x;
}

#endif

/* Most of its time in libm's sin and cos, whose bodies hold inlined helpers of glibc's own (the
 * rounding-mode guards of fenv_private.h): a profile names the functions a user called. */
#include <math.h>
#include <stdio.h>
#include <time.h>

static double thread_cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void) {
  double s = 0, end = thread_cpu_seconds() + 0.6;
  for (int i = 0; thread_cpu_seconds() < end; ++i)
    for (int k = 0; k < 10000; ++k) s += sin((i * 10000 + k) * 0.001) + cos(k * 0.002);
  printf("sincos %d\n", s != 0);
  return 0;
}

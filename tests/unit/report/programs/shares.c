/* Three functions that burn 60%, 30% and 10% of the CPU time: each spins until its thread's CPU
 * clock has advanced by its share, so the split holds whatever the machine's speed. The total
 * (in ms) is the first argument, 1500 by default. */
#include <stdlib.h>
#include <time.h>

static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static volatile unsigned long sink;

static void __attribute__((noinline)) spin(double ms) {
  double end = cpu_ms() + ms;
  while (cpu_ms() < end)
    for (int i = 0; i < 1000; ++i) sink += i;
}

void __attribute__((noinline)) sixty(double total) { spin(total * 0.6); }
void __attribute__((noinline)) thirty(double total) { spin(total * 0.3); }
void __attribute__((noinline)) ten(double total) { spin(total * 0.1); }

int main(int argc, char** argv) {
  double total = argc > 1 ? atof(argv[1]) : 1500;
  /* Interleaved in slices, so that a slow start or end of the run favours none of them. */
  for (int slice = 0; slice < 10; ++slice) {
    sixty(total / 10);
    thirty(total / 10);
    ten(total / 10);
  }
  return 0;
}

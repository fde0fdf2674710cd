/* Two traced functions of equal elapsed time (150 ms each, whatever else the machine runs): one
 * spins on the CPU, one sleeps. */
#include <time.h>

__attribute__((noinline)) void spinner(void) {
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 150000000L);
}

__attribute__((noinline)) void napper(void) {
  struct timespec nap = {0, 150000000L};
  nanosleep(&nap, 0);
}

int main(void) {
  spinner();
  napper();
  return 0;
}

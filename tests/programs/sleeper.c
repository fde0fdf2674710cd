/* Sleeps in several ways; under --clock wall each sleep must still last its full time. */
#include <poll.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(void) {
  double start = now();
  unsigned left = sleep(0) + 0;
  usleep(100000);
  struct timespec quarter = {0, 150000000};
  int slept = nanosleep(&quarter, NULL);
  int polled = poll(NULL, 0, 100);
  double elapsed = now() - start;
  printf("sleep=%u nanosleep=%d poll=%d full=%s\n", left, slept, polled,
         elapsed >= 0.35 ? "yes" : "no");
  return 0;
}

/* Sixty children, each busy for a few milliseconds and then sent SIGTERM, and SIGKILL a moment
 * later, as a pool's workers are when it is terminated: each dies at a different point of
 * whatever a profiler does at its end. Prints how many children it made. */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "burn.h"

static void pause_us(long us) {
  struct timespec t = {0, us * 1000};
  nanosleep(&t, NULL);
}

int main(void) {
  int made = 0;
  for (int i = 0; i < 60; ++i) {
    pid_t child = fork();
    if (child == 0) _exit(burn_cpu(1.0) == 0);  /* busy until it is killed */
    if (child < 0) break;
    ++made;
    pause_us(2000 + 150 * i);                    /* 2 to 11 ms of work */
    kill(child, SIGTERM);
    pause_us(10 * (i % 20));                     /* its end, cut at 0 to 190 us */
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
  }
  printf("killed_children %d\n", made);
  return 0;
}

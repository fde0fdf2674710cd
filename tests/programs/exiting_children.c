/* Sixty children, each busy for a few milliseconds and then leaving by exit(0), and sent SIGTERM
 * as it leaves, as a pool's workers are when the pool is closed while they end: the signal lands
 * at a different point of each child's end (0 to 590 us after the child says it is leaving).
 * Prints how many children it made. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "burn.h"

int main(void) {
  int made = 0;
  for (int i = 0; i < 60; ++i) {
    int leaving[2];
    if (pipe(leaving) != 0) break;
    pid_t child = fork();
    if (child == 0) {
      close(leaving[0]);
      burn_cpu(0.005);
      if (write(leaving[1], "x", 1) != 1) _exit(3);
      exit(0);
    }
    close(leaving[1]);
    if (child < 0) break;
    ++made;
    char x;
    struct timespec late = {0, 10000L * i};
    if (read(leaving[0], &x, 1) == 1) nanosleep(&late, NULL);
    close(leaving[0]);
    kill(child, SIGTERM);
    waitpid(child, NULL, 0);
  }
  printf("exiting_children %d\n", made);
  return 0;
}

/* Four hundred children, each allocating and freeing blocks too large for glibc's per-thread
 * cache (so that every call takes its arena's lock) until it is sent SIGTERM, 0 to 0.8 ms after it
 * was forked (while the profiler's fork handler frees and allocates, or the child does): a pool's
 * workers terminated while they allocate. A child still alive 10 s after its SIGTERM is counted
 * as hung, and killed. Prints how many children it made and how many hung. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(void) {
  int made = 0, hung = 0;
  for (int i = 0; i < 400; ++i) {
    pid_t child = fork();
    if (child == 0) {
      unsigned seed = (unsigned)i;
      for (;;) {
        void* a = malloc(2048 + rand_r(&seed) % 63488);
        void* b = malloc(4096);
        free(a);
        free(b);
      }
    }
    if (child < 0) break;
    ++made;
    struct timespec pause = {0, (i % 40) * 20000};
    nanosleep(&pause, NULL);
    kill(child, SIGTERM);
    int status, waited_ms = 0;
    while (waitpid(child, &status, WNOHANG) == 0 && waited_ms < 10000) {
      usleep(1000);
      ++waited_ms;
    }
    if (waited_ms >= 10000) {
      ++hung;
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
    }
  }
  printf("terminated_in_malloc %d hung %d\n", made, hung);
  return 0;
}

/* A worker that blocks every signal while it burns CPU, as liblzma's workers and most thread
 * pools do, beside a main thread that burns CPU too. With "raw" the worker blocks them with the
 * system call itself, past any interposed pthread_sigmask. Prints how many signals the worker
 * sees blocked: the same with and without a profiler. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "burn.h"

static int raw;

static void* worker(void* arg) {
  (void)arg;
  sigset_t all, now;
  sigfillset(&all);
  if (raw) {
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, 8);
  } else {
    pthread_sigmask(SIG_BLOCK, &all, NULL);
  }
  burn_cpu(0.6);
  pthread_sigmask(SIG_BLOCK, NULL, &now);
  long blocked = 0;
  for (int sig = 1; sig < NSIG; ++sig) blocked += sigismember(&now, sig) == 1;
  return (void*)blocked;
}

int main(int argc, char** argv) {
  raw = argc > 1 && strcmp(argv[1], "raw") == 0;
  pthread_t thread;
  pthread_create(&thread, NULL, worker, NULL);
  burn_cpu(0.4);
  void* blocked;
  pthread_join(thread, &blocked);
  printf("worker blocks %ld signals\n", (long)blocked);
  return 0;
}

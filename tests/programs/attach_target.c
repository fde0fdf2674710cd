/* A process to attach to: two threads burn 2 s of CPU each in spin(), then it says so on a
   pipe-friendly stdout and exits with a distinctive status. */
#include <pthread.h>
#include <stdio.h>

#include "burn.h"

__attribute__((noinline)) static double spin(double seconds) { return burn_cpu(seconds); }

static void* worker(void* arg) {
  (void)arg;
  spin(2.0);
  return NULL;
}

int main(void) {
  pthread_t thread;
  pthread_create(&thread, NULL, worker, NULL);
  spin(2.0);
  pthread_join(thread, NULL);
  printf("attach target done\n");
  return 5;
}

/* The main thread leaves through pthread_exit; the process ends when its worker (0.3 s of CPU)
 * does. */
#include <pthread.h>
#include <stdio.h>

#include "burn.h"

static void* worker(void* arg) {
  burn_cpu(0.3);
  printf("worker %ld done\n", (long)arg);
  return NULL;
}

int main(void) {
  pthread_t thread;
  pthread_create(&thread, NULL, worker, (void*)7);
  pthread_exit(NULL);
}

/* The main thread leaves through pthread_exit; the process ends when its worker does. */
#include <pthread.h>
#include <stdio.h>

static void* worker(void* arg) {
  volatile unsigned long x = 0;
  for (unsigned long i = 0; i < 300000000UL; ++i) x += i;
  printf("worker %ld done\n", (long)arg);
  return NULL;
}

int main(void) {
  pthread_t thread;
  pthread_create(&thread, NULL, worker, (void*)7);
  pthread_exit(NULL);
}

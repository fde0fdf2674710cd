/* 2000 threads, 8 at a time, each burning about 0.3 ms of CPU: most end before their first
 * sample, and their time must still be accounted for. */
#include <pthread.h>
#include <time.h>

static void* burn(void* arg) {
  (void)arg;
  struct timespec start, now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  do {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 300000);
  return NULL;
}

int main(void) {
  for (int round = 0; round < 250; ++round) {
    pthread_t threads[8];
    for (int i = 0; i < 8; ++i) pthread_create(&threads[i], NULL, burn, NULL);
    for (int i = 0; i < 8; ++i) pthread_join(threads[i], NULL);
  }
  return 0;
}

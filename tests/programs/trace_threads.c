/* Four threads each call work() a known number of times: 1000, 2000, 3000, 4000. */
#include <pthread.h>
#include <stdio.h>

__attribute__((noinline)) int work(int x) { return x * 2 + 1; }

void* run(void* arg) {
  long times = (long)arg;
  volatile int sink = 0;
  for (long i = 0; i < times; ++i) sink += work((int)i);
  return NULL;
}

int main(void) {
  pthread_t threads[4];
  for (long t = 0; t < 4; ++t) pthread_create(&threads[t], NULL, run, (void*)((t + 1) * 1000));
  for (int t = 0; t < 4; ++t) pthread_join(threads[t], NULL);
  printf("threads done\n");
  return 0;
}

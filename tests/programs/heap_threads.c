/* Four threads allocating and freeing at once: counts must stay exact. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

enum { kThreads = 4, kRounds = 10000 };

__attribute__((noinline)) static void* churn(void* arg) {
  (void)arg;
  for (int i = 0; i < kRounds; ++i) {
    void* volatile p = malloc(24);
    free(p);
  }
  return NULL;
}

int main(void) {
  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; ++i) pthread_create(&threads[i], NULL, churn, NULL);
  for (int i = 0; i < kThreads; ++i) pthread_join(threads[i], NULL);
  const char done[] = "heap_threads done\n";
  (void)!write(1, done, sizeof done - 1);
  return 0;
}

/* malloc and free of mixed small sizes (16-215 bytes, 1024 blocks live: more than glibc's
 * per-thread cache keeps, so most calls reach the arena) in a loop, with (argument 1) or without
 * (0) one extra thread that only sleeps: what any second thread in a process costs glibc's malloc,
 * which takes its locks and atomic operations once the process is no longer single-threaded (the
 * reason the runtime keeps no thread of its own unless it needs one, docs/how-it-works.md). */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static void* sleeper(void* arg) {
  (void)arg;
  for (;;) pause();
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1 && atoi(argv[1])) {
    pthread_t thread;
    pthread_create(&thread, NULL, sleeper, NULL);
  }
  long n = argc > 2 ? atol(argv[2]) : 20000000;
  void* keep[1024] = {0};
  unsigned x = 1;
  for (long i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    unsigned slot = (x >> 8) % 1024;
    free(keep[slot]);
    keep[slot] = malloc(16 + (x >> 20) % 200);
  }
  for (int i = 0; i < 1024; ++i) free(keep[i]);
  return 0;
}

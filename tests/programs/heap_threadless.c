/* Counts its own threads while it allocates, before and after the runtime's rounds are due
 * (25 ms): under the heap collector without signal sampling the runtime starts no thread, so it
 * prints "threads 1 1"; with a writer thread, "threads 2 2". Each round is then done by the
 * allocating thread: the blocks kept to the end (100 of 1000 bytes) must all be in the profile. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int count_threads(void) {
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return -1;
  int n = 0;
  struct dirent* entry;
  while ((entry = readdir(dir)) != NULL) n += entry->d_name[0] != '.';
  closedir(dir);
  return n;
}

static void churn(void) {
  for (int i = 0; i < 20000; ++i) {
    char* volatile p = malloc(64 + i % 512);
    p[0] = (char)i;
    free(p);
  }
}

static char* kept[100];

int main(void) {
  int before = count_threads();
  churn();
  struct timespec pause = {0, 60 * 1000 * 1000};
  nanosleep(&pause, NULL);
  churn();
  for (int i = 0; i < 100; ++i) {
    kept[i] = malloc(1000);
    memset(kept[i], 1, 1000);
  }
  int after = count_threads();
  printf("threads %d %d\n", before, after);
  return 0;
}

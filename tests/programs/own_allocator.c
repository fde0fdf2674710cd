// A program with an allocator of its own (a bump arena), built with -finstrument-functions, that
// counts the calls made to it and prints the counts at the end with write(2) (printf would
// allocate its buffer). Under hotline it must print what it prints plain: the runtime never
// calls the program's allocator, nor do the glibc calls it makes. It also makes glibc allocate
// for it (a thread, a directory listing), which is the program's own business.
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Alignas(16) char arena[1 << 22];
static size_t used;
static unsigned long mallocs, frees, callocs, reallocs;

void *malloc(size_t n) {
  ++mallocs;
  if (used + n + 16 > sizeof arena) return NULL;
  char *p = arena + used;
  used += (n + 15) & ~(size_t)15;
  return p;
}

void free(void *p) {
  (void)p;
  ++frees;
}

void *calloc(size_t count, size_t size) {
  ++callocs;
  char *p = malloc(count * size);
  if (p) memset(p, 0, count * size);
  return p;
}

void *realloc(void *old, size_t n) {
  ++reallocs;
  char *p = malloc(n);
  if (p && old) memcpy(p, old, n);  // the arena is one block: reading past old is harmless
  return p;
}

static void *worker(void *arg) {
  void *volatile p = malloc(64);
  free(p);
  return arg;
}

int main(void) {
  void *volatile kept;  // so that the compiler keeps each pair
  for (int i = 0; i < 5; ++i) {
    kept = malloc(100 + (size_t)i);
    free(kept);
  }
  pthread_t t;
  if (pthread_create(&t, NULL, worker, NULL) == 0) pthread_join(t, NULL);
  DIR *dir = opendir("/");
  if (dir) closedir(dir);
  char line[128];
  int n = snprintf(line, sizeof line, "malloc=%lu free=%lu calloc=%lu realloc=%lu\n", mallocs,
                   frees, callocs, reallocs);
  if (write(1, line, (size_t)n) != n) return 1;
  return 0;
}

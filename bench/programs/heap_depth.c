/* heap_depth DEPTH N [paths]: recurses DEPTH frames deep, then makes N malloc/free pairs of 32
 * bytes there: the heap collectors' cost per event as a function of stack depth. With `paths`,
 * every pair is made at the end of a path of its own: at each of the DEPTH levels the walk goes
 * through one of two functions, chosen by a pseudo-random number per pair, so that two
 * consecutive events share only their outermost frames (the many call sites of real code). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void one_pair(long i) {
  char* p = malloc(32);
  p[0] = (char)i;
  sink += (unsigned long)p[0];
  free(p);
}

__attribute__((noinline)) static void churn(long n) {
  for (long i = 0; i < n; ++i) one_pair(i);
}

__attribute__((noinline)) static void descend(int depth, long n) {
  if (depth <= 1) {
    churn(n);
  } else {
    descend(depth - 1, n);
  }
  sink += (unsigned long)depth; /* not a tail call: every frame stays on the stack */
}

static void left(int depth, unsigned long path, long i);
static void right(int depth, unsigned long path, long i);

__attribute__((noinline)) static void step(int depth, unsigned long path, long i) {
  if (depth <= 1)
    one_pair(i);
  else if (path & 1)
    left(depth - 1, path >> 1 | path << 63, i);
  else
    right(depth - 1, path >> 1 | path << 63, i);
  sink += (unsigned long)depth;
}
__attribute__((noinline)) static void left(int depth, unsigned long path, long i) {
  step(depth, path, i);
  sink += 1;
}
__attribute__((noinline)) static void right(int depth, unsigned long path, long i) {
  step(depth, path, i);
  sink += 2;
}

int main(int argc, char** argv) {
  int depth = argc > 1 ? atoi(argv[1]) : 3;
  long n = argc > 2 ? atol(argv[2]) : 5000000;
  if (argc > 3 && strcmp(argv[3], "paths") == 0) {
    /* Each level is two frames (step and left or right): DEPTH frames in all. */
    unsigned long x = 88172645463325252ul;
    for (long i = 0; i < n; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      step(depth / 2, x, i);
    }
  } else {
    descend(depth, n);
  }
  printf("%lu\n", sink % 10);
  return 0;
}

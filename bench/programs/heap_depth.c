/* heap_depth DEPTH N: recurses DEPTH frames deep, then makes N malloc/free pairs of 32 bytes
 * there: the heap collectors' cost per event as a function of stack depth. */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void churn(long n) {
  for (long i = 0; i < n; ++i) {
    char* p = malloc(32);
    p[0] = (char)i;
    sink += (unsigned long)p[0];
    free(p);
  }
}

__attribute__((noinline)) static void descend(int depth, long n) {
  if (depth <= 1) {
    churn(n);
  } else {
    descend(depth - 1, n);
  }
  sink += (unsigned long)depth; /* not a tail call: every frame stays on the stack */
}

int main(int argc, char** argv) {
  int depth = argc > 1 ? atoi(argv[1]) : 3;
  long n = argc > 2 ? atol(argv[2]) : 5000000;
  descend(depth, n);
  printf("%lu\n", sink % 10);
  return 0;
}

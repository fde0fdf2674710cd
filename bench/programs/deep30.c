/* A 30-deep C call chain, built without frame pointers, burning CPU at its bottom: the stack
   shape the kernel sampler's DWARF unwinding is measured on. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static double leaf(long n) {
  double x = 0;
  for (long i = 0; i < n; ++i) x += (double)(i % 7) * 0.5;
  return x;
}

__attribute__((noinline)) static double level(int depth, long n) {
  volatile char frame[48];  // a frame of some size, as real code has
  frame[0] = (char)depth;
  double r = depth == 0 ? leaf(n) : level(depth - 1, n) + frame[0];
  return r;
}

int main(int argc, char** argv) {
  long rounds = argc > 1 ? atol(argv[1]) : 400;
  double sum = 0;
  for (long r = 0; r < rounds; ++r) sum += level(30, 1000000);
  printf("%g\n", sum);
  return 0;
}

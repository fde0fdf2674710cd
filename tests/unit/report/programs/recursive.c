/* A deeply recursive function: depth(n) recurses n levels and does work at every level, so most
 * of the time is spent with many activations of it on the stack at once. Its inclusive time must
 * still be reported at no more than 100%. */
#include <stdlib.h>

static volatile unsigned long sink;

unsigned long __attribute__((noinline)) depth(int n) {
  unsigned long sum = 0;
  for (int i = 0; i < 20000; ++i) sum += (unsigned long)i * (unsigned long)n;
  sink += sum;
  if (n == 0) return sum;
  return depth(n - 1) + 1;
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 300;
  for (int r = 0; r < rounds; ++r) depth(200);
  return 0;
}

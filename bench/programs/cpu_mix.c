/* CPU-bound work for the sampling benchmark, spending time in its own code and in libc (qsort
 * with a comparator, memcpy), so that unwinding has to go through code without frame pointers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compare(const void* a, const void* b) {
  unsigned x = *(const unsigned*)a, y = *(const unsigned*)b;
  return (x > y) - (x < y);
}

static unsigned long mix(unsigned long x) {
  for (int i = 0; i < 64; ++i) x = x * 6364136223846793005ul + 1442695040888963407ul;
  return x;
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 40;
  enum { N = 200000 };
  static unsigned data[N], copy[N];
  unsigned long acc = 0;
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < N; ++i) data[i] = (unsigned)mix((unsigned long)i + (unsigned long)r);
    memcpy(copy, data, sizeof data);
    qsort(copy, N, sizeof copy[0], compare);
    acc += copy[N / 2];
  }
  printf("%lu\n", acc);
  return 0;
}

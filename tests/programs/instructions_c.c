// Instructions executed, counted from the block counters, against callgrind (instructions_test):
// an insertion sort, a Collatz-style loop, a recursion, one statement per line; and the same
// work with several statements on a line.
#include <stdio.h>
#include <stdlib.h>

static int table[4000];

static void insertion_sort(int* a, int n) {
  for (int i = 1; i < n; i++) {
    int v = a[i];
    int j = i - 1;
    while (j >= 0 && a[j] > v) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = v;
  }
}

static long collatz(long limit) {
  long steps = 0;
  for (long start = 1; start < limit; start++) {
    long x = start;
    while (x != 1) {
      if (x % 2 == 0)
        x = x / 2;
      else
        x = 3 * x + 1;
      steps++;
    }
  }
  return steps;
}

static long walk(int depth) {
  if (depth == 0) return 1;
  return walk(depth - 1) + walk(depth - 2 < 0 ? 0 : depth - 2) / 2;
}

// clang-format off
static long mix(long n) {
  long s = 0; for (long i = 0; i < n; i++) { if (i % 3 == 0) s += i * 7; else s ^= i; while (s > 100000) s /= 3; } return s;
}
// clang-format on

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3000;
  for (int i = 0; i < n; i++) table[i] = (i * 7919) % 1000;
  insertion_sort(table, n);
  printf("%d %ld %ld %ld\n", table[n / 2], collatz(20000), walk(18), mix(200000));
  return 0;
}

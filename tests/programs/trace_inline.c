/* An instrumented function inlined into its caller: helper() is inlined into outer() (its entry
 * hook then passes outer's call site), and calls leaf() from there. Called 7 times from main, the
 * edges are main → outer, outer → helper and helper → leaf, 7 calls each. */
#include <stdio.h>

__attribute__((noinline)) int leaf(int x) { return x * 3; }

static inline __attribute__((always_inline)) int helper(int x) { return leaf(x) + 1; }

__attribute__((noinline)) int outer(int x) { return helper(x) * 2; }

int main(void) {
  int total = 0;
  for (int i = 0; i < 7; ++i) total += outer(i);
  printf("total %d\n", total);
  return 0;
}

/* A 30-deep recursion spinning in its leaf, built without frame pointers: only CFI unwinds it. */
#include <stdio.h>

#include "burn.h"

__attribute__((noinline)) double leaf(void) { return burn_cpu(0.4); }

__attribute__((noinline)) double descend(int depth) {
  double x = depth > 0 ? descend(depth - 1) : leaf();
  __asm__ volatile("" : "+g"(x)); /* work after the call: no tail call */
  return x + depth;
}

int main(void) {
  printf("%d\n", descend(30) > 0);
  return 0;
}

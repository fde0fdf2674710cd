/* longjmps out of a recursion 50 levels deep, 10 times; after each jump leaf() is called once.
 * No exit hooks run for the abandoned frames: the tracer must close them itself. */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf escape;

__attribute__((noinline)) void dive(int depth) {
  if (depth == 0) longjmp(escape, 1);
  dive(depth - 1);
}
__attribute__((noinline)) int leaf(int x) { return x + 1; }

int main(void) {
  int total = 0;
  for (int i = 0; i < 10; ++i) {
    if (setjmp(escape) == 0) dive(50);
    total += leaf(i);
  }
  printf("total %d\n", total);
  return 0;
}

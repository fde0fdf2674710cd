/* Known execution counts: a loop, a recursion, a branch never taken, a function never called. */
#include <stdio.h>

static int square(int x) { return x * x; }

static long fib(int n) {
  if (n < 2)
    return n;
  return fib(n - 1) + fib(n - 2);
}

static void never_called(void) {
  puts("never");
}

int main(int argc, char** argv) {
  (void)argv;
  int sum = 0;
  for (int i = 0; i < 100; i++)
    sum += square(i);
  if (argc > 10)
    never_called();
  printf("%d %ld\n", sum, fib(20));
  return 0;
}

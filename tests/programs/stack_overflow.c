/* Burns CPU, then recurses until the stack is full and the process dies of SIGSEGV. */
#include <stdio.h>
#include <string.h>

static unsigned long burn(unsigned long n) {
  volatile unsigned long x = 0;
  for (unsigned long i = 0; i < n; ++i) x += i;
  return x;
}

__attribute__((noinline)) static long recurse(long n) {
  char pad[4096];
  memset(pad, (int)n, sizeof pad);
  return recurse(n + 1) + pad[n % 4096];
}

int main(void) {
  printf("burnt %d\n", burn(300000000UL) > 0);
  fflush(stdout);
  return (int)recurse(0);
}

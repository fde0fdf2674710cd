/* Burns 0.3 s of CPU, then recurses until the stack is full and the process dies of SIGSEGV. */
#include <stdio.h>
#include <string.h>

#include "burn.h"

__attribute__((noinline)) static long recurse(long n) {
  char pad[4096];
  memset(pad, (int)n, sizeof pad);
  return recurse(n + 1) + pad[n % 4096];
}

int main(void) {
  printf("burnt %d\n", burn_cpu(0.3) > 0);
  fflush(stdout);
  return (int)recurse(0);
}

// Calls f, becomes a daemon (glibc's daemon() forks, and its parent leaves through an _exit
// inside libc), and calls f again in the child: the parent's profile holds the first call, the
// child's the second.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) int f(int x) { return x * 2; }

int main(void) {
  printf("%d\n", f(1));
  fflush(stdout);
  if (daemon(1, 1) != 0) return 1;
  printf("%d\n", f(2));
  return 0;
}

/* Sends itself the toggle signal (SIGUSR2, hotline record's default) three times in quick
 * succession, then allocates for a while: the profile must hold three STATE records from the
 * signal, off, on, off, in order, however soon after each other they came. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  for (int i = 0; i < 3; ++i) raise(SIGUSR2);
  long sum = 0;
  for (int i = 0; i < 200000; ++i) {
    char* volatile p = malloc(100 + i % 300);
    p[0] = (char)i;
    sum += p[0];
    free(p);
  }
  printf("toggler %ld\n", sum != 0 ? 1L : 0L);
  return 0;
}

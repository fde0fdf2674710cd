/* Burns CPU, then leaves with _exit(7) from two calls deep. */
#include <stdio.h>
#include <unistd.h>

#include "burn.h"

__attribute__((noinline)) static void leave(void) {
  burn_cpu(0.1);
  _exit(7);
}

__attribute__((noinline)) static void deeper(void) {
  burn_cpu(0.2);
  leave();
}

int main(void) {
  fprintf(stderr, "leaving with _exit\n");
  deeper();
  return 0;
}

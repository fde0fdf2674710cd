/* Burns CPU, then dies by SIGSEGV. */
#include <stdio.h>

#include "burn.h"

int main(void) {
  burn_cpu(0.3);
  fprintf(stderr, "about to crash\n");
  volatile int* nowhere = (volatile int*)0;
  *nowhere = 1;
  return 0;
}

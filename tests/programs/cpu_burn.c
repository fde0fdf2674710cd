/* Two functions burning 0.4 s and 0.2 s of CPU, then a distinctive exit status. */
#include <stdio.h>

#include "burn.h"

__attribute__((noinline)) static double heavy(void) { return burn_cpu(0.4); }
__attribute__((noinline)) static double light(void) { return burn_cpu(0.2); }

int main(void) {
  double r = heavy() + light();
  printf("cpu_burn done %d\n", r > 0);
  fprintf(stderr, "cpu_burn stderr line\n");
  return 3;
}

/* For the HTML report's tests: a known hottest function (hot, 0.4 s of CPU, all of it spent in
 * the call on the line marked HOT) and a colder one (cold, 0.15 s). Built at -O0 so that both
 * stay functions of their own with their calls on their own lines. */
#include <stdio.h>

#include "burn.h"

static double hot(void) {
  double r = 0;
  r += burn_cpu(0.4); /* HOT: line 10 */
  return r;
}

static double cold(void) {
  double r = 0;
  r += burn_cpu(0.15);
  return r;
}

int main(void) {
  double r = hot() + cold();
  printf("html_target %d\n", r > 0);
  return 0;
}

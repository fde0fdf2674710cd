/* A statically linked program with a variable to watch: --watch must refuse it (no runtime). */
#include <stdio.h>

void bump_other(int times);
int other_counter(void);

int main(void) {
  bump_other(3);
  printf("%d\n", other_counter());
  return 0;
}

/* Linked with -static: LD_PRELOAD cannot reach it. */
#include <stdio.h>

int main(void) {
  puts("static hello");
  return 0;
}

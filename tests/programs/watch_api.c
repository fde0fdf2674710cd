/* hotline_watch() on a heap object and a stack object, for their lifetimes. Runs plain too:
 * without hotline the calls return -1 and cost nothing. */
#include <stdio.h>
#include <stdlib.h>

#include "hotline/hotline.h"

static long sum_on_stack(int n) {
  long acc = 0;
  hotline_watch(&acc, sizeof acc, "acc");
  for (int i = 1; i <= n; ++i) acc += i; /* WRITE acc */
  hotline_unwatch(&acc);
  return acc;
}

int main(void) {
  int* cell = malloc(sizeof *cell);
  if (!cell) return 1;
  *cell = 0;
  hotline_watch(cell, sizeof *cell, "cell");
  for (int i = 0; i < 20; ++i) *cell = i * i; /* WRITE cell */
  hotline_unwatch(cell);
  *cell = -1; /* not watched any more */
  long acc = sum_on_stack(10);
  printf("cell=%d acc=%ld\n", *cell, acc);
  free(cell);
  return 0;
}

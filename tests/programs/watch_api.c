/* hotline_watch() on a heap object and a stack object, for their lifetimes. Runs plain too:
 * without hotline the calls return -1 and cost nothing. */
#include <stdio.h>
#include <stdlib.h>

#include "hotline/hotline.h"

static volatile short extra[4];

/* With `cell` watched, three more fit in the four debug registers; the fourth is refused. */
static void watch_too_many(void) {
  for (int i = 0; i < 4; ++i) {
    static const char* names[] = {"extra0", "extra1", "extra2", "extra3"};
    hotline_watch((const void*)&extra[i], sizeof extra[i], names[i]);
  }
  for (int i = 0; i < 4; ++i) extra[i] = (short)(i + 1); /* WRITE extra */
  for (int i = 0; i < 4; ++i) hotline_unwatch((const void*)&extra[i]);
}

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
  watch_too_many();
  hotline_unwatch(cell);
  *cell = -1; /* not watched any more */
  long acc = sum_on_stack(10);
  printf("cell=%d acc=%ld\n", *cell, acc);
  free(cell);
  return 0;
}

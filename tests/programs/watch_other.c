/* watch_known.c's other file: a static `counter` of its own, named `watch_other.c:counter`. */
static volatile int counter;

void bump_other(int times) {
  for (int i = 0; i < times; ++i) counter += 2; /* WRITE counter other */
}

int other_counter(void) { return counter; }

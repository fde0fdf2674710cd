/* A program with a slowdown put in on purpose: built with -DSLOWDOWN=100, slow_path does twice
   the work it does with -DSLOWDOWN=0. Thirty other functions do the same work in both builds, each
   varying from run to run by up to ±5% (seeded by the pid), so that `hotline diff` has noise to
   see through. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef SLOWDOWN
#define SLOWDOWN 0
#endif

static volatile double sink;

/* Each function's own loop, so that its time is its own. */
#define WORK(n) \
  for (long i = 0; i < (n); ++i) sink += (double)i * 0.5

__attribute__((noinline)) static void slow_path(long n) { WORK(n * (100 + SLOWDOWN) / 100); }

#define OTHER(k) \
  __attribute__((noinline)) static void other_##k(long n) { WORK(n); }
OTHER(0) OTHER(1) OTHER(2) OTHER(3) OTHER(4) OTHER(5) OTHER(6) OTHER(7) OTHER(8) OTHER(9)
OTHER(10) OTHER(11) OTHER(12) OTHER(13) OTHER(14) OTHER(15) OTHER(16) OTHER(17) OTHER(18)
OTHER(19) OTHER(20) OTHER(21) OTHER(22) OTHER(23) OTHER(24) OTHER(25) OTHER(26) OTHER(27)
OTHER(28) OTHER(29)

static void (*const others[30])(long) = {
    other_0,  other_1,  other_2,  other_3,  other_4,  other_5,  other_6,  other_7,
    other_8,  other_9,  other_10, other_11, other_12, other_13, other_14, other_15,
    other_16, other_17, other_18, other_19, other_20, other_21, other_22, other_23,
    other_24, other_25, other_26, other_27, other_28, other_29};

int main(int argc, char** argv) {
  long unit = argc > 1 ? atol(argv[1]) : 4000000;  /* work per function */
  srand((unsigned)getpid());
  slow_path(unit * 10);
  for (int k = 0; k < 30; ++k) others[k](unit * (95 + rand() % 11) / 100);
  printf("regression done\n");
  return 0;
}

/* A CPU-bound workload for bench/report_vs_perf.sh: a fixed call tree of 40 functions
 * (node_0 is the root; node_i calls its children, then works a little), a recursive
 * function, and N threads (argv[2], default 2) that run the tree for S seconds (argv[1],
 * default 10). The shape of the tree matters, not what the functions compute. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define WORK(x, n) for (int i_ = 0; i_ < (n); ++i_) x = x * 6364136223846793005ul + 1442695040888963407ul

static unsigned long recurse(unsigned long x, int depth);
static unsigned long node_0(unsigned long x);
static unsigned long node_1(unsigned long x);
static unsigned long node_2(unsigned long x);
static unsigned long node_3(unsigned long x);
static unsigned long node_4(unsigned long x);
static unsigned long node_5(unsigned long x);
static unsigned long node_6(unsigned long x);
static unsigned long node_7(unsigned long x);
static unsigned long node_8(unsigned long x);
static unsigned long node_9(unsigned long x);
static unsigned long node_10(unsigned long x);
static unsigned long node_11(unsigned long x);
static unsigned long node_12(unsigned long x);
static unsigned long node_13(unsigned long x);
static unsigned long node_14(unsigned long x);
static unsigned long node_15(unsigned long x);
static unsigned long node_16(unsigned long x);
static unsigned long node_17(unsigned long x);
static unsigned long node_18(unsigned long x);
static unsigned long node_19(unsigned long x);
static unsigned long node_20(unsigned long x);
static unsigned long node_21(unsigned long x);
static unsigned long node_22(unsigned long x);
static unsigned long node_23(unsigned long x);
static unsigned long node_24(unsigned long x);
static unsigned long node_25(unsigned long x);
static unsigned long node_26(unsigned long x);
static unsigned long node_27(unsigned long x);
static unsigned long node_28(unsigned long x);
static unsigned long node_29(unsigned long x);
static unsigned long node_30(unsigned long x);
static unsigned long node_31(unsigned long x);
static unsigned long node_32(unsigned long x);
static unsigned long node_33(unsigned long x);
static unsigned long node_34(unsigned long x);
static unsigned long node_35(unsigned long x);
static unsigned long node_36(unsigned long x);
static unsigned long node_37(unsigned long x);
static unsigned long node_38(unsigned long x);
static unsigned long node_39(unsigned long x);

__attribute__((noinline)) static unsigned long node_0(unsigned long x) {
  x = node_1(x);
  x = node_2(x);
  x = node_3(x);
  x = node_8(x);
  x = node_14(x);
  WORK(x, 200);
  return x;
}
__attribute__((noinline)) static unsigned long node_1(unsigned long x) {
  x = node_5(x);
  x = node_9(x);
  x = node_11(x);
  x = node_17(x);
  x = node_26(x);
  WORK(x, 237);
  return x;
}
__attribute__((noinline)) static unsigned long node_2(unsigned long x) {
  x = node_4(x);
  x = node_18(x);
  x = node_21(x);
  x = node_23(x);
  x = node_36(x);
  WORK(x, 274);
  return x;
}
__attribute__((noinline)) static unsigned long node_3(unsigned long x) {
  x = node_6(x);
  x = node_29(x);
  x = node_32(x);
  x = node_34(x);
  x = recurse(x, 6);
  WORK(x, 311);
  return x;
}
__attribute__((noinline)) static unsigned long node_4(unsigned long x) {
  WORK(x, 348);
  return x;
}
__attribute__((noinline)) static unsigned long node_5(unsigned long x) {
  x = node_7(x);
  x = node_12(x);
  WORK(x, 385);
  return x;
}
__attribute__((noinline)) static unsigned long node_6(unsigned long x) {
  x = node_16(x);
  WORK(x, 422);
  return x;
}
__attribute__((noinline)) static unsigned long node_7(unsigned long x) {
  x = node_22(x);
  x = node_30(x);
  WORK(x, 459);
  return x;
}
__attribute__((noinline)) static unsigned long node_8(unsigned long x) {
  x = node_10(x);
  x = node_38(x);
  WORK(x, 496);
  return x;
}
__attribute__((noinline)) static unsigned long node_9(unsigned long x) {
  x = node_13(x);
  WORK(x, 233);
  return x;
}
__attribute__((noinline)) static unsigned long node_10(unsigned long x) {
  x = recurse(x, 6);
  WORK(x, 270);
  return x;
}
__attribute__((noinline)) static unsigned long node_11(unsigned long x) {
  WORK(x, 307);
  return x;
}
__attribute__((noinline)) static unsigned long node_12(unsigned long x) {
  WORK(x, 344);
  return x;
}
__attribute__((noinline)) static unsigned long node_13(unsigned long x) {
  x = node_19(x);
  x = node_20(x);
  x = node_25(x);
  WORK(x, 381);
  return x;
}
__attribute__((noinline)) static unsigned long node_14(unsigned long x) {
  x = node_15(x);
  x = node_35(x);
  WORK(x, 418);
  return x;
}
__attribute__((noinline)) static unsigned long node_15(unsigned long x) {
  WORK(x, 455);
  return x;
}
__attribute__((noinline)) static unsigned long node_16(unsigned long x) {
  WORK(x, 492);
  return x;
}
__attribute__((noinline)) static unsigned long node_17(unsigned long x) {
  x = node_24(x);
  x = recurse(x, 6);
  WORK(x, 229);
  return x;
}
__attribute__((noinline)) static unsigned long node_18(unsigned long x) {
  x = node_28(x);
  x = node_39(x);
  WORK(x, 266);
  return x;
}
__attribute__((noinline)) static unsigned long node_19(unsigned long x) {
  WORK(x, 303);
  return x;
}
__attribute__((noinline)) static unsigned long node_20(unsigned long x) {
  x = node_31(x);
  WORK(x, 340);
  return x;
}
__attribute__((noinline)) static unsigned long node_21(unsigned long x) {
  WORK(x, 377);
  return x;
}
__attribute__((noinline)) static unsigned long node_22(unsigned long x) {
  WORK(x, 414);
  return x;
}
__attribute__((noinline)) static unsigned long node_23(unsigned long x) {
  WORK(x, 451);
  return x;
}
__attribute__((noinline)) static unsigned long node_24(unsigned long x) {
  x = recurse(x, 6);
  WORK(x, 488);
  return x;
}
__attribute__((noinline)) static unsigned long node_25(unsigned long x) {
  x = node_33(x);
  WORK(x, 225);
  return x;
}
__attribute__((noinline)) static unsigned long node_26(unsigned long x) {
  x = node_27(x);
  WORK(x, 262);
  return x;
}
__attribute__((noinline)) static unsigned long node_27(unsigned long x) {
  WORK(x, 299);
  return x;
}
__attribute__((noinline)) static unsigned long node_28(unsigned long x) {
  WORK(x, 336);
  return x;
}
__attribute__((noinline)) static unsigned long node_29(unsigned long x) {
  WORK(x, 373);
  return x;
}
__attribute__((noinline)) static unsigned long node_30(unsigned long x) {
  WORK(x, 410);
  return x;
}
__attribute__((noinline)) static unsigned long node_31(unsigned long x) {
  x = recurse(x, 6);
  WORK(x, 447);
  return x;
}
__attribute__((noinline)) static unsigned long node_32(unsigned long x) {
  WORK(x, 484);
  return x;
}
__attribute__((noinline)) static unsigned long node_33(unsigned long x) {
  WORK(x, 221);
  return x;
}
__attribute__((noinline)) static unsigned long node_34(unsigned long x) {
  WORK(x, 258);
  return x;
}
__attribute__((noinline)) static unsigned long node_35(unsigned long x) {
  x = node_37(x);
  WORK(x, 295);
  return x;
}
__attribute__((noinline)) static unsigned long node_36(unsigned long x) {
  WORK(x, 332);
  return x;
}
__attribute__((noinline)) static unsigned long node_37(unsigned long x) {
  WORK(x, 369);
  return x;
}
__attribute__((noinline)) static unsigned long node_38(unsigned long x) {
  x = recurse(x, 6);
  WORK(x, 406);
  return x;
}
__attribute__((noinline)) static unsigned long node_39(unsigned long x) {
  WORK(x, 443);
  return x;
}

__attribute__((noinline)) static unsigned long recurse(unsigned long x, int depth) {
  WORK(x, 150);
  if (depth > 0) x = recurse(x, depth - 1);
  return x;
}

static double seconds;
static volatile unsigned long sink;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void* run(void* arg) {
  unsigned long x = (unsigned long)arg;
  double end = now() + seconds;
  while (now() < end)
    for (int i = 0; i < 100; ++i) x = node_0(x);
  sink += x;
  return NULL;
}

int main(int argc, char** argv) {
  seconds = argc > 1 ? atof(argv[1]) : 10;
  int threads = argc > 2 ? atoi(argv[2]) : 2;
  if (threads < 1) threads = 1;
  pthread_t ids[64];
  if (threads > 64) threads = 64;
  for (int t = 1; t < threads; ++t) pthread_create(&ids[t], NULL, run, (void*)(unsigned long)t);
  run(0);
  for (int t = 1; t < threads; ++t) pthread_join(ids[t], NULL);
  return 0;
}

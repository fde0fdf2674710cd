/* Code whose addresses the golden tests put into a hand-made profile, so that the real
 * symbolizer names real functions, files and lines. Built into the test binary with -O0 -g.
 * Each golden_here() call records an address at its own line; the functions are never run for
 * their work, only once to record the addresses. Do not move lines around: the golden files
 * name them. */
#include "golden_target.h"

void* golden_sites[GOLDEN_SITES];

__attribute__((noinline)) void* golden_here(void) { return __builtin_return_address(0); }

__attribute__((noinline)) void golden_leaf(void) {
  golden_sites[SITE_LEAF_A] = golden_here();
  golden_sites[SITE_LEAF_B] = golden_here();
}

__attribute__((noinline)) void golden_middle(void) {
  golden_sites[SITE_MIDDLE_CALL] = golden_here();
  golden_sites[SITE_MIDDLE_SELF] = golden_here();
  golden_leaf();
}

__attribute__((noinline)) void golden_recurse(int n) {
  golden_sites[SITE_RECURSE_CALL] = golden_here();
  golden_sites[SITE_RECURSE_SELF] = golden_here();
  if (n > 0) golden_recurse(n - 1);
}

__attribute__((noinline)) void golden_main(void) {
  golden_sites[SITE_MAIN_CALL_MIDDLE] = golden_here();
  golden_sites[SITE_MAIN_CALL_RECURSE] = golden_here();
  golden_sites[SITE_MAIN_SELF] = golden_here();
  golden_middle();
  golden_recurse(0);
}

/* main → outer → inner, built with -fno-asynchronous-unwind-tables -fno-unwind-tables -g: gcc then
 * writes the call-frame information of these functions into .debug_frame only, which Debian's
 * libunwind does not read. inner burns 0.5 s of CPU. */
#include <stdio.h>

#include "burn.h"

__attribute__((noipa)) double inner(double seconds) { return burn_cpu(seconds); }

__attribute__((noipa)) double outer(double seconds) { return inner(seconds) + 1; }

int main(void) {
  printf("debug_frame_chain %d\n", outer(0.5) > 0);
  return 0;
}

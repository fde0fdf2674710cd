/* Switches sampling off for its set-up and on for the work, and marks a phase. */
#include <stdio.h>

#include "burn.h"
#include "hotline/hotline.h"

int main(void) {
  hotline_stop();
  burn_cpu(0.3); /* not to be seen */
  hotline_start();
  hotline_mark("work");
  burn_cpu(0.2);
  printf("paused done\n");
  return 0;
}

/* Uses SIGPROF and ITIMER_PROF itself: its ticks must keep coming under hotline. */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>

#include "burn.h"

static volatile sig_atomic_t ticks;

static void on_prof(int sig) {
  (void)sig;
  ticks++;
}

int main(void) {
  struct sigaction act = {0};
  act.sa_handler = on_prof;
  sigaction(SIGPROF, &act, NULL);
  struct itimerval every_10ms = {{0, 10000}, {0, 10000}};
  setitimer(ITIMER_PROF, &every_10ms, NULL);
  burn_cpu(0.5);
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_PROF, &off, NULL);
  /* 0.5 s at 100 Hz is 50 ticks. ITIMER_PROF counts CPU time by the scheduler's ticks, which a
     busy VM misses (a plain run has seen 20): what matters is that they keep coming. */
  printf("own SIGPROF ticks arrived: %s\n", ticks >= 10 ? "yes" : "no");
  return ticks >= 10 ? 0 : 1;
}

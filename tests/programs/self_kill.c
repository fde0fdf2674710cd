/* Burns 0.3 s of CPU, then dies of SIGKILL, which no handler sees: the runtime cannot end the
 * profile. */
#include <signal.h>
#include <unistd.h>

#include "burn.h"

int main(void) {
  burn_cpu(0.3);
  kill(getpid(), SIGKILL);
  pause();
  return 0;
}

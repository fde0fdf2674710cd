/* Burns CPU, then dies of SIGKILL, which no handler sees: the runtime cannot end the profile. */
#include <signal.h>
#include <unistd.h>

int main(void) {
  volatile unsigned long x = 0;
  for (unsigned long i = 0; i < 300000000UL; ++i) x += i;
  kill(getpid(), SIGKILL);
  pause();
  return 0;
}

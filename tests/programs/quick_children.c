/* Fifty children that exit at once, as a shell's or make's do before exec, and one that works:
 * only the working one has anything to profile. */
#include <sys/wait.h>
#include <unistd.h>

static unsigned long burn(unsigned long n) {
  volatile unsigned long x = 0;
  for (unsigned long i = 0; i < n; ++i) x += i;
  return x;
}

int main(void) {
  for (int i = 0; i < 50; ++i) {
    pid_t child = fork();
    if (child == 0) _exit(0);
    waitpid(child, NULL, 0);
  }
  pid_t worker = fork();
  if (worker == 0) _exit(burn(300000000UL) == 0);
  waitpid(worker, NULL, 0);
  return 0;
}

/* Fifty children that exit at once, as a shell's or make's do before exec, and one that works
 * (0.3 s of CPU): only the working one has anything to profile. */
#include <sys/wait.h>
#include <unistd.h>

#include "burn.h"

int main(void) {
  for (int i = 0; i < 50; ++i) {
    pid_t child = fork();
    if (child == 0) _exit(0);
    waitpid(child, NULL, 0);
  }
  pid_t worker = fork();
  if (worker == 0) _exit(burn_cpu(0.3) == 0);
  waitpid(worker, NULL, 0);
  return 0;
}

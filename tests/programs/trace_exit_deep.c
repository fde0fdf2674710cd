/* Calls exit() from 10 calls deep after forking in the middle of a call: both the parent's and
 * the child's counts must be right, although no frame returns. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) void down(int n) {
  if (n == 5) {
    fflush(stdout);
    pid_t child = fork();
    if (child > 0) waitpid(child, NULL, 0);
  }
  if (n == 10) exit(0);
  down(n + 1);
}

int main(void) {
  down(0);
  return 1;
}

/* Forks; parent and child each burn CPU, the child exits 4, the parent reports it. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "burn.h"

int main(void) {
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    burn_cpu(0.3);
    printf("child done\n");
    exit(4);
  }
  burn_cpu(0.3);
  int status = 0;
  waitpid(child, &status, 0);
  printf("parent done, child exit %d\n", WEXITSTATUS(status));
  return 0;
}

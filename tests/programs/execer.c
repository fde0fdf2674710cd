/* Burns, then executes itself with an argument; the new image burns too. */
#include <stdio.h>
#include <unistd.h>

#include "burn.h"

int main(int argc, char** argv) {
  burn_cpu(0.2);
  if (argc > 1) {
    printf("second image\n");
    return 5;
  }
  printf("first image\n");
  fflush(stdout);
  execl(argv[0], argv[0], "again", (char*)0);
  perror("execl");
  return 1;
}

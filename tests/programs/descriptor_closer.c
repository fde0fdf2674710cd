/* A program that closes every descriptor it did not open, as daemons do, then writes files of
 * its own through low descriptors and dup2: none of its files may receive anything else. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static unsigned long burn(unsigned long n) {
  volatile unsigned long x = 0;
  for (unsigned long i = 0; i < n; ++i) x += i;
  return x;
}

static void write_file(const char* name, int seed) {
  int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  char line[64];
  for (int i = 0; i < 2000; ++i) {
    int n = snprintf(line, sizeof line, "%s line %d seed %d\n", name, i, seed);
    if (write(fd, line, (size_t)n) != n) return;
    if (i % 500 == 0) burn(20000000UL);
  }
  close(fd);
}

int main(int argc, char** argv) {
  const char* how = argc > 1 ? argv[1] : "closefrom";
  if (strcmp(how, "closefrom") == 0) {
    closefrom(3);
  } else if (strcmp(how, "close_range") == 0) {
    close_range(3, ~0u, 0);
  } else {
    for (int fd = 3; fd < 1024; ++fd) close(fd);
  }
  write_file("a.txt", 1);
  /* Every descriptor number up to 1023 becomes one of the program's files in turn. */
  int fd = open("b.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  for (int target = 3; target < 1024; ++target) {
    if (target == fd) continue;
    dup2(fd, target);
    close(target);
  }
  close(fd);
  write_file("b.txt", 2);
  write_file("c.txt", 3);
  puts("closer done");
  return 0;
}

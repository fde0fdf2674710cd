/* A program that closes every descriptor it did not open, as daemons do, then writes files of
 * its own through low descriptors and dup2: none of its files may receive anything else.
 *   descriptor_closer closefrom|close_range|close_loop
 *   descriptor_closer dup2_race   for a second, dup2s its file onto the lowest free number,
 *                                 writes a byte through it and closes it, as shells do with
 *                                 redirections: a descriptor another thread opens meanwhile
 *                                 at that number must not be taken over, nor closed */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

static int dup2_race(void) {
  int mine = open("race.txt", O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
  int lowest = dup(mine); /* the lowest free number, as the program sees its table */
  close(lowest);
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  long written = 0;
  do {
    for (int i = 0; i < 1000; ++i, ++written) {
      if (dup2(mine, lowest) != lowest || write(lowest, "x", 1) != 1 || close(lowest) != 0) {
        printf("descriptor %d was not the program's after %ld writes: %s\n", lowest, written,
               strerror(errno));
        return 1;
      }
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 1000000000L);
  struct stat st;
  if (fstat(mine, &st) != 0 || st.st_size != written) {
    printf("race.txt has %ld bytes, the program wrote %ld\n", (long)st.st_size, written);
    return 1;
  }
  puts("race done");
  return 0;
}

int main(int argc, char** argv) {
  const char* how = argc > 1 ? argv[1] : "closefrom";
  if (strcmp(how, "dup2_race") == 0) return dup2_race();
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

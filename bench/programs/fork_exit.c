/* Forks N children, one after the other, that exit at once (with _exit, or exit when the
 * second argument starts with 'e'), and prints two means in microseconds: "fork", from the
 * parent's fork() to the child running, and "exit", from the child's exit call to the parent's
 * waitpid returning. The exit figure is what a program that reaps many short children pays
 * per child (and what changes when it counts SIGCHLDs). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 500;
  int use_exit = argc > 2 && argv[2][0] == 'e'; /* "exit"; "_exit" or nothing: _exit */
  volatile double* stamps =
      mmap(NULL, 2 * sizeof(double), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  double fork_total = 0, exit_total = 0;
  for (int i = 0; i < n; ++i) {
    double before = now_us();
    pid_t child = fork();
    if (child == 0) {
      stamps[0] = now_us(); /* running */
      stamps[1] = now_us(); /* about to exit */
      if (use_exit) exit(0);
      _exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    double reaped = now_us();
    fork_total += stamps[0] - before;
    exit_total += reaped - stamps[1];
  }
  printf("fork %.1f exit %.1f\n", fork_total / n, exit_total / n);
  return 0;
}

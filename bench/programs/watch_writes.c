/* Writes one global N times, for bench/watch_overhead.sh. With "floor" it first opens a
 * counting hardware watchpoint on the global itself (no signal, no record): what the trap alone
 * costs, the floor under any watchpoint-based tool. */
#define _GNU_SOURCE
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

volatile long watched;

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  int fd = -1;
  if (argc > 2 && strcmp(argv[2], "floor") == 0) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_BREAKPOINT;
    attr.bp_type = HW_BREAKPOINT_W;
    attr.bp_addr = (uint64_t)&watched;
    attr.bp_len = sizeof watched;
    attr.sample_period = 1;
    attr.exclude_kernel = 1;
    fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    if (fd < 0) {
      perror("perf_event_open");
      return 1;
    }
  }
  for (long i = 0; i < n; ++i) watched = i;
  if (fd >= 0) {
    uint64_t count = 0;
    if (read(fd, &count, sizeof count) != sizeof count || count != (uint64_t)n) {
      fprintf(stderr, "the watchpoint counted %llu writes of %ld\n", (unsigned long long)count, n);
      return 1;
    }
  }
  printf("%ld\n", watched);
  return 0;
}

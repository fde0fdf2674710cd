/* Known allocations for the sampled heap mode, whose estimates heap_test checks against these
 * truths within their standard errors: 100000 temporaries of 100 bytes (make_temporaries),
 * 4000 blocks of 2000 bytes kept to the end (keep_blocks), and 10 blocks of 4 MiB live at once
 * on top of those (the peak, make_peak). -O0 keeps every call. With an argument, it pauses for
 * 200 ms after the temporaries. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void make_temporaries(void) {
  for (int i = 0; i < 100000; ++i) {
    char* p = malloc(100);
    p[0] = (char)i;
    free(p);
  }
}

static char* kept[4000];
static void keep_blocks(void) {
  for (int i = 0; i < 4000; ++i) {
    kept[i] = malloc(2000);
    kept[i][0] = (char)i;
  }
}

static void make_peak(void) {
  char* big[10];
  for (int i = 0; i < 10; ++i) {
    big[i] = malloc(4 << 20);
    memset(big[i], 1, 4096);
  }
  for (int i = 0; i < 10; ++i) free(big[i]);
}

int main(int argc, char** argv) {
  (void)argv;
  make_temporaries();
  if (argc > 1) usleep(200000); /* "pause": the runtime flushes the temporaries on its own */
  keep_blocks();
  make_peak();
  const char done[] = "heap_sampled done\n";
  write(1, done, sizeof done - 1);
  return 0;
}

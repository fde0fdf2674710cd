/* Writes known values to watched variables from two threads (watch_test.cc knows every count,
 * range and line in advance). The markers name the writing lines for the test. volatile keeps
 * each write a store of its own at any optimisation. */
#include <pthread.h>
#include <stdio.h>

void bump_other(int times);
int other_counter(void);

volatile long total;   /* both threads: the worker 1..1000, then main -1..-500 */
volatile double ratio; /* the worker: 0.5, 1.0, 1.5, 2.0 */
enum color { RED = 0, GREEN = 5, BLUE = 9 };
volatile enum color paint;   /* main: BLUE 4 times, GREEN 6 times */
static volatile int counter; /* a static with the name of watch_other.c's: 3 writes */
volatile _Bool ready;        /* main: true, false, true */
volatile long double wide;   /* 16 bytes: no watchpoint covers it */
volatile char* cursor;       /* a pointer */

static void* worker(void* arg) {
  (void)arg;
  for (long i = 1; i <= 1000; ++i) total = i;   /* WRITE total worker */
  for (int i = 1; i <= 4; ++i) ratio = i * 0.5; /* WRITE ratio */
  return NULL;
}

int main(void) {
  static char text[4];
  pthread_t thread;
  if (pthread_create(&thread, NULL, worker, NULL) != 0) return 1;
  pthread_join(thread, NULL);
  for (long i = 1; i <= 500; ++i) total = -i;                     /* WRITE total main */
  for (int i = 0; i < 10; ++i) paint = i % 3 == 0 ? BLUE : GREEN; /* WRITE paint */
  for (int i = 0; i < 3; ++i) counter = counter + 10;             /* WRITE counter main */
  ready = 1;                                                      /* WRITE ready */
  ready = 0;
  ready = 1;
  cursor = text;
  wide = 1.5L;
  bump_other(7);
  printf("total=%ld ratio=%.1f paint=%d counter=%d other=%d ready=%d\n", total, ratio, paint,
         counter, other_counter(), ready);
  return 3;
}

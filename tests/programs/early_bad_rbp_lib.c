/* A library whose constructor starts a thread before hotline's runtime starts (so its stack
 * bounds are unknown to the runtime), and the thread spins with rbp pointing at a page nobody may
 * read, just above its stack: a frame-pointer walk that trusted rbp would fault. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>

enum { kStack = 512 * 1024 };
static char* region; /* the thread's stack, then a page nobody may read */

static void* spin_with_bad_rbp(void* arg) {
  (void)arg;
  uintptr_t bad = (uintptr_t)region + kStack;
  unsigned long n = 1500000000UL;
  __asm__ volatile(
      "mov %%rbp, %%r12\n\t"
      "mov %1, %%rbp\n\t"
      "1: dec %0\n\t"
      "jnz 1b\n\t"
      "mov %%r12, %%rbp\n\t"
      : "+r"(n)
      : "r"(bad)
      : "r12", "cc");
  return NULL;
}

static pthread_t early;
__attribute__((constructor)) static void start(void) {
  region = mmap(NULL, kStack + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  mprotect(region + kStack, 4096, PROT_NONE);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstack(&attr, region, kStack);
  pthread_create(&early, &attr, spin_with_bad_rbp, NULL);
  pthread_attr_destroy(&attr);
}
void join_early(void) { pthread_join(early, NULL); }

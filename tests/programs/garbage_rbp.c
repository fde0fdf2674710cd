/* A frame-pointer walk must survive whatever a program keeps in rbp. Three threads of the
 * runtime's own knowledge (main, a pthread with glibc's stack, a pthread on a stack of its own
 * mapping) each run, in turn, hand-written assembler that loads rbp with a hostile value and
 * spins, and C whose register pressure makes GCC use rbp as a general register (this file is
 * built with -fomit-frame-pointer). Prints one line whose value does not depend on timing. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

/* spin_with_rbp(value, iterations): rbp = value while it counts down; no CFI, no frame. */
void spin_with_rbp(uint64_t value, uint64_t iterations);
__asm__(
    ".text\n"
    ".globl spin_with_rbp\n"
    ".type spin_with_rbp, @function\n"
    "spin_with_rbp:\n"
    "  push %rbp\n"
    "  mov %rdi, %rbp\n"
    "1:\n"
    "  dec %rsi\n"
    "  jnz 1b\n"
    "  pop %rbp\n"
    "  ret\n"
    ".size spin_with_rbp, .-spin_with_rbp\n");

/* Sixteen live accumulators: more than the registers GCC has without rbp. */
__attribute__((noinline)) uint64_t Pressure(uint64_t n) {
  uint64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8;
  uint64_t i = 9, j = 10, k = 11, l = 12, m = 13, o = 14, p = 15, q = 16;
  for (uint64_t x = 0; x < n; ++x) {
    a += b ^ x, b += c * 3, c ^= d + x, d += e >> 1, e ^= f + 7, f += g * 5, g ^= h + x;
    h += i >> 3, i ^= j * 9, j += k ^ x, k ^= l + 11, l += m >> 2, m ^= o * 13, o += p ^ x;
    p ^= q + 17, q += a >> 5;
  }
  return a ^ b ^ c ^ d ^ e ^ f ^ g ^ h ^ i ^ j ^ k ^ l ^ m ^ o ^ p ^ q;
}

static char* no_access; /* a page nobody may read */

/* Hostile values for rbp, some computed from the calling thread's own stack. */
static void Hostile(void) {
  volatile uint64_t self_loop[2];
  self_loop[0] = (uint64_t)&self_loop[0]; /* a frame whose caller is itself */
  self_loop[1] = 0x1234;
  volatile uint64_t downward[2];
  downward[0] = (uint64_t)&downward[0] - 4096; /* a caller below its callee */
  downward[1] = 0x1234;
  uint64_t* heap = malloc(64);
  for (int w = 0; w < 8; ++w) heap[w] = (uint64_t)no_access;
  uint64_t sp_here = (uint64_t)__builtin_frame_address(0);
  const uint64_t values[] = {
      0x1,
      0x7,
      0xdeadbeefdeadbeefull,
      0xffffffffffffff00ull,
      0xffff888000000000ull, /* the kernel's direct map */
      (uint64_t)no_access,
      (uint64_t)no_access + 4088,
      (uint64_t)heap, /* a chain that leads off the stack into an unreadable page */
      sp_here - 65536,
      sp_here + 3, /* misaligned, inside the stack */
      (uint64_t)&self_loop[0],
      (uint64_t)&downward[0],
  };
  for (unsigned v = 0; v < sizeof values / sizeof values[0]; ++v) spin_with_rbp(values[v], 6000000);
  free(heap);
}

static volatile uint64_t sink;

static void* Work(void* arg) {
  (void)arg;
  for (int round = 0; round < 2; ++round) {
    Hostile();
    sink += Pressure(3000000);
  }
  return NULL;
}

int main(void) {
  no_access = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (no_access == MAP_FAILED) return 1;
  pthread_t plain, own_stack;
  pthread_create(&plain, NULL, Work, NULL);
  enum { kStack = 256 * 1024 };
  char* stack = mmap(NULL, kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstack(&attr, stack, kStack);
  pthread_create(&own_stack, &attr, Work, NULL);
  pthread_attr_destroy(&attr);
  Work(NULL);
  pthread_join(plain, NULL);
  pthread_join(own_stack, NULL);
  printf("garbage_rbp %llu\n", (unsigned long long)(Pressure(1000) & 0xffff));
  return 0;
}

/* Stacks that change between allocations in every way the heap collector's reuse of the previous
 * stack must notice: recursion of varying depth, two callers of the same function with the
 * same frame size, and the same functions at other stack positions (through pad, whose frame is
 * large). Each block is kept, so the leak table counts blocks per full stack; heap_test
 * computes the expected counts from the loop below. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void* blocks[10000];

__attribute__((noinline)) static void leaf(int i) { blocks[i] = malloc(24); }
__attribute__((noinline)) static void via_a(int i) { leaf(i); }
__attribute__((noinline)) static void via_b(int i) { leaf(i); }

__attribute__((noinline)) static void recurse(int depth, int i) {
  if (depth == 0) {
    if (i % 3 == 0) {
      via_a(i);
    } else {
      via_b(i);
    }
  } else {
    recurse(depth - 1, i);
  }
}

__attribute__((noinline)) static void pad(int depth, int i) {
  volatile char room[512];
  memset((char*)room, 0, sizeof room);
  recurse(depth, i);
}

int main(void) {
  /* Consecutive blocks often share depth and position and differ only in via_a / via_b. */
  for (int i = 0; i < 10000; ++i) {
    if ((i / 3) % 2) {
      pad((i / 6) % 7, i);
    } else {
      recurse((i / 6) % 7, i);
    }
  }
  const char done[] = "heap_stacks done\n";
  write(1, done, sizeof done - 1);
  return 0;
}

// Allocations, of sizes no library call here makes, from stacks of every shape the heap
// collector's stack walker meets (built -O2 without frame pointers, as libraries are): the same
// function reached through different call sites at the same depth, recursion deeper than the
// recorded 128 frames, alloca frames (the CFA on rbp), frames in libc (qsort's comparator) and
// libstdc++ (containers, exceptions, a destructor allocating while an exception unwinds),
// longjmp out of a deep stack, signal handlers on the thread's stack and on an alternate one,
// and four threads. heap_test records it with HOTLINE_HEAP_VERIFY=1 (every stack compared with
// unw_backtrace's) and checks the groupings it knows in advance.
#include <alloca.h>
#include <pthread.h>
#include <signal.h>

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

volatile unsigned long sink;

__attribute__((noinline)) void Use(void* p) {
  sink = sink + (reinterpret_cast<unsigned long>(p) & 1);
}

__attribute__((noinline)) void AllocateAndFree(size_t size) {
  void* p = malloc(size);
  Use(p);
  free(p);
}

// Leaf is reached through Middle from SiteOne (3 times) and SiteTwo (5 times), each called from
// a loop of main's: the same inner frames at the same stack addresses, with different return
// addresses outside them (into SiteOne or SiteTwo, and into main).
__attribute__((noinline)) void Leaf() {
  AllocateAndFree(1077);
  sink = sink + 3;  // not a tail call: Leaf keeps its frame
}
__attribute__((noinline)) void Middle() {
  Leaf();
  sink = sink + 1;
}
__attribute__((noinline)) void SiteOne() {
  Middle();
  sink = sink + 1;
}
__attribute__((noinline)) void SiteTwo() {
  Middle();
  sink = sink + 2;
}

// Allocates `size` bytes `depth` frames down, and one block on the way back at every tenth
// level.
__attribute__((noinline)) void Recurse(int depth, size_t size) {
  if (depth == 0) {
    AllocateAndFree(size);
  } else {
    Recurse(depth - 1, size);
    if (depth % 10 == 0) AllocateAndFree(size + 1);
  }
  sink = sink + 1;
}

// A frame whose size is known only at run time: its CFA is kept on rbp.
__attribute__((noinline)) void WithAlloca(int n) {
  auto* buffer = static_cast<char*>(alloca(size_t(n)));
  std::memset(buffer, n, size_t(n));
  Use(buffer);
  AllocateAndFree(size_t(n) + 3);
}

int CompareAllocating(const void* a, const void* b) {
  AllocateAndFree(21);
  return *static_cast<const int*>(a) - *static_cast<const int*>(b);
}

struct AllocatesOnDestruction {
  ~AllocatesOnDestruction() { AllocateAndFree(33); }
};

__attribute__((noinline)) void Throws(int depth) {
  AllocatesOnDestruction guard;
  if (depth == 0) throw std::runtime_error("a message long enough to be allocated on the heap");
  Throws(depth - 1);
}

void CppWork() {
  std::map<int, std::string> names;
  for (int i = 0; i < 50; ++i) names[i] = std::string(40, char('a' + i % 26));
  std::vector<std::vector<int>> grid;
  for (int i = 0; i < 20; ++i) grid.emplace_back(size_t(i + 1), i);
  for (int i = 0; i < 5; ++i) {
    try {
      Throws(i * 3);
    } catch (const std::exception& e) {
      sink = sink + std::strlen(e.what());
    }
  }
  sink = sink + names.size() + grid.size();
}

jmp_buf jump;

// Loop bounds the compiler cannot see: an unrolled loop would make each call a site of its own.
volatile int ones = 3, twos = 5, rounds = 3;

__attribute__((noinline)) void DeepThenJump(int depth) {
  AllocateAndFree(1055);
  if (depth < 0) return;  // never: a way out GCC can see, which longjmp is not to it
  if (depth == 0) longjmp(jump, 1);
  DeepThenJump(depth - 1);
  sink = sink + 1;
}

void OnSignal(int) { AllocateAndFree(1099); }

void* Thread(void* arg) {
  int id = int(reinterpret_cast<long>(arg));
  for (int i = 0; i < 200; ++i) Recurse((i * 7 + id * 13) % 40, 1064);
  for (int i = 0; i < 20; ++i) WithAlloca(2000 + i * 8 + id);
  return nullptr;
}

}  // namespace

int main() {
  for (int i = 0; i < ones; ++i) SiteOne();
  for (int i = 0; i < twos; ++i) SiteTwo();

  // Deeper than 128 frames: the recorded stacks are cut to the 128 innermost.
  for (int depth : {10, 150, 140, 160, 5, 135, 150}) Recurse(depth, 1234);
  for (int i = 0; i < 300; ++i) Recurse((i * 37) % 60, 1048);
  for (int i = 0; i < 30; ++i) WithAlloca(24 + i * 16);

  int values[64];
  for (int i = 0; i < 64; ++i) values[i] = (i * 29) % 64;
  qsort(values, 64, sizeof values[0], CompareAllocating);

  CppWork();

  for (int round = 0; round < rounds; ++round) {
    if (setjmp(jump) == 0) DeepThenJump(20 + round * 5);
    AllocateAndFree(1056);
  }

  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigaction(SIGUSR1, &action, nullptr);
  for (int i = 0; i < 4; ++i) raise(SIGUSR1);
  static char alternate[64 * 1024];
  stack_t stack{};
  stack.ss_sp = alternate;
  stack.ss_size = sizeof alternate;
  sigaltstack(&stack, nullptr);
  action.sa_flags = SA_ONSTACK;
  sigaction(SIGUSR2, &action, nullptr);
  for (int i = 0; i < 4; ++i) raise(SIGUSR2);

  pthread_t threads[4];
  for (long i = 0; i < 4; ++i)
    pthread_create(&threads[i], nullptr, Thread, reinterpret_cast<void*>(i));
  for (pthread_t t : threads) pthread_join(t, nullptr);

  std::printf("heap_walk done %d\n", values[0] + values[63]);
  return 0;
}

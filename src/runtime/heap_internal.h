// What the heap collector's files share (heap.h is its face to the rest of the runtime). Every
// object here is defined once, in the file named beside it. The tests the shims make on every
// call are inline here: without link-time optimisation, a call into another file for each of
// them would slow every malloc and free of the program.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "format/schema.h"
#include "format/writer.h"
#include "runtime/modules.h"
#include "runtime/signals.h"
#include "runtime/stack_walk.h"

// Hidden, as the runtime's definitions are: the compiler then reaches these objects directly, as
// it did when each was local to one file, rather than through the GOT.
#pragma GCC visibility push(hidden)

namespace hotline::rt {

// ---- The real allocator, found with dlsym; a bootstrap arena serves dlsym's own needs
// (heap_real_allocator.cc). ----

struct RealAllocator {
  void* (*malloc)(size_t);
  void (*free)(void*);
  void* (*calloc)(size_t, size_t);
  void* (*realloc)(void*, size_t);
  int (*posix_memalign)(void**, size_t, size_t);
  void* (*aligned_alloc)(size_t, size_t);
  void* (*memalign)(size_t, size_t);
  void* (*valloc)(size_t);
  void* (*pvalloc)(size_t);
  void* (*mmap)(void*, size_t, int, int, int, off_t);
  int (*munmap)(void*, size_t);
};
extern RealAllocator g_real;
extern std::atomic<int> g_resolved;  // 0 not yet, 1 resolving (dlsym may allocate), 2 done

bool Resolve();
inline bool Ready() { return g_resolved.load(std::memory_order_acquire) == 2 || Resolve(); }

inline constexpr size_t kBootBytes = 256 * 1024;
extern unsigned char g_boot[kBootBytes];
inline constexpr int kMaxBootBlocks = 256;
extern std::atomic<int> g_boot_count;
extern void* g_boot_blocks[kMaxBootBlocks];

inline bool InBoot(const void* p) {
  auto* c = static_cast<const unsigned char*>(p);
  return c >= g_boot && c < g_boot + kBootBytes;
}
void* BootAlloc(size_t size, size_t align);
size_t BootSize(const void* p);

// ---- Per-thread event rings (heap.cc), drained into records by the writer (heap_records.cc). --

enum EventType : uint64_t { kPad = 0, kAllocEvent = 1, kFreeEvent = 2, kStackEvent = 3 };
inline constexpr size_t kRingWords = 1u << 17;  // 1 MiB
inline constexpr int kMaxHeapFrames = 128;
inline constexpr int kSeenStacks = 4096;

struct HeapRing {
  std::atomic<uint64_t> head;  // words written (producer: the owning thread)
  std::atomic<uint64_t> tail;  // words consumed (whoever holds the session lock)
  std::atomic<int> state;      // 0 free, 1 in use, 2 thread ended: drain then free
  pid_t tid;
  uint64_t last_ns;            // the time of the last event drained (under the session lock)
  uint64_t seen[kSeenStacks];  // stack hashes this thread has sent (direct-mapped)
  uint64_t words[kRingWords];
  StackWalker walker;  // the allocating thread's unwind rules and its last stack
};

extern std::atomic<bool> g_heap_on;

// An allocation event's kind word: the AllocKind, and this bit when it was sampled.
inline constexpr uint64_t kSampledBit = 1u << 8;

// Events are stamped with the time-stamp counter (half the cost of the vDSO clock here); the
// writer turns ticks into CLOCK_MONOTONIC nanoseconds with one fixed rate, measured when the
// collector starts. A fixed rate keeps the counter's order, which is what matching a release
// with a later reuse of its address (by another thread) needs.
inline uint64_t PreciseNow() { return __builtin_ia32_rdtsc(); }

// heap_records.cc: the clocks noted when the collector starts, and the writer's conversion.
void StartTickCalibration();
// With the session lock held: the ring's events become records.
void DrainRing(format::Writer& writer, HeapRing* ring);
// In the child after fork, whose threads send their stacks again (ResetHeapAfterFork).
void ForgetStackNodes();

// The registers of an interposed function's caller as the function found them: the return
// address, the stack pointer above it, and the caller's rbp, which the function's prologue
// saved (__builtin_frame_address makes the function set up a frame pointer). Read while the
// function's frame lives: operator new's forms end in a tail call, after which it is reused.
struct CallerFrame {
  uint64_t pc, sp, bp;
};
inline CallerFrame CallerOf(const void* frame) {
  const auto* fp = static_cast<const uint64_t*>(frame);
  return CallerFrame{fp[1], uint64_t(fp + 2), fp[0]};
}
#define HOTLINE_CALLER_FRAME CallerOf(__builtin_frame_address(0))

void RecordAlloc(void* p, size_t size, format::AllocKind kind, const CallerFrame& frame,
                 bool sampled = false);
// `time` is taken before the block is released, so that a reuse of the address by another
// thread always comes later.
void RecordFree(void* p, format::FreeKind kind, uint64_t size, uint64_t time);

// ---- What every shim (heap_shims.cc) asks before it records. ----

extern __thread int t_busy __attribute__((tls_model("initial-exec")));  // inside a shim already

// Marks the calling thread as inside a shim for the scope: what the real allocator does under
// it (operator new calling malloc, libunwind) is not recorded twice. Survives exceptions
// (operator new may throw bad_alloc through it).
struct Busy {
  Busy() { ++t_busy; }
  ~Busy() { --t_busy; }
  Busy(const Busy&) = delete;
  Busy& operator=(const Busy&) = delete;
};

// Whether this call, made from `caller`, is the program's own to record.
inline bool Recording(const void* caller) {
  return g_heap_on.load(std::memory_order_relaxed) && t_busy == 0 && !InRuntimeNow() &&
         !IsRuntimeCode(caller);
}

// ---- The sampled mode (heap_sampling.cc). ----

extern uint64_t g_sample_bytes;  // 0: the exact mode
extern uint64_t g_sample_seed;   // 0: seeded from the clock
extern __thread int64_t t_until_sample __attribute__((tls_model("initial-exec")));

bool PointFellInside(size_t size);

// The live sampled blocks: a counting filter in front of a table of their addresses.
class SampledBlocks {
 public:
  // One load: false means `address` is surely not a live sampled block.
  bool mayHold(uint64_t address) const {
    size_t slot = Slot(address);
    return (occupied_[slot / 64].load(std::memory_order_relaxed) >> (slot % 64)) & 1;
  }
  // Records a newly sampled block; false when there is no room (its release would be missed,
  // so the block is then not reported as sampled).
  __attribute__((noinline)) bool insert(uint64_t address);
  // Removes `address` when it is a live sampled block: true when it was.
  __attribute__((noinline)) bool take(uint64_t address);
  // In a forked child: the parent's blocks are not the child's, and the lock may have been
  // held by a thread that does not exist here.
  void forget();

 private:
  static constexpr uint8_t kSticky = 255;  // a saturated counter never comes down
  static uint64_t Hash(uint64_t address) { return (address >> 4) * 0x9E3779B97F4A7C15ull; }
  static size_t Slot(uint64_t address) { return size_t(Hash(address) >> 48); }

  struct Guard;
  bool grow();
  void setOccupied(size_t slot, bool on);

  // The counts (under the lock), and one bit per slot, set while its count is not 0: the bits
  // are what every release reads, 8 KiB that stay in the L1 cache where the 64 KiB of counts
  // would miss it on most releases.
  std::atomic<uint8_t> filter_[1 << 16] = {};
  std::atomic<uint64_t> occupied_[(1 << 16) / 64] = {};
  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
  uint64_t* keys_ = nullptr;  // open addressing, 0 = empty
  size_t capacity_ = 0, count_ = 0;
};
extern SampledBlocks g_sampled;

// The sampled mode's test for a call of the program's (not one nested in another shim).
inline bool SampledMode() {
  return g_sample_bytes != 0 && g_heap_on.load(std::memory_order_relaxed) && t_busy == 0;
}

// Whether the allocation of `size` bytes just made, from `caller`, is sampled.
__attribute__((always_inline)) inline bool TakeSample(size_t size, const void* caller) {
  t_until_sample -= int64_t(std::min<size_t>(size, size_t(1) << 62));
  if (t_until_sample > 0) return false;
  return PointFellInside(size) && !InRuntimeNow() && !IsRuntimeCode(caller);
}

void RecordSampledAlloc(void* p, size_t size, format::AllocKind kind, const CallerFrame& frame);

// Before a block is released: whether it was sampled (it is then forgotten).
__attribute__((always_inline)) inline bool TakeSampledRelease(const void* p) {
  return g_sampled.mayHold(uint64_t(p)) && g_sampled.take(uint64_t(p));
}

void RecordSampledRelease(void* p, format::FreeKind kind, uint64_t size);

}  // namespace hotline::rt

#pragma GCC visibility pop

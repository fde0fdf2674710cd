#include "runtime/heap.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <new>

#include "runtime/modules.h"
#include "runtime/session.h"
#include "runtime/signals.h"
#include "runtime/stack_walk.h"
#include "runtime/threads.h"
#include "runtime/unwind.h"

#define HOTLINE_EXPORT extern "C" __attribute__((visibility("default")))

namespace hotline::rt {
namespace {

// ---- The real allocator, found with dlsym; a bootstrap arena serves dlsym's own needs. ----

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
RealAllocator g_real;
std::atomic<int> g_resolved{0};  // 0 not yet, 1 resolving (dlsym may allocate), 2 done

constexpr size_t kBootBytes = 256 * 1024;
alignas(64) unsigned char g_boot[kBootBytes];
std::atomic<size_t> g_boot_used{0};
struct BootBlock {
  size_t size;
  size_t pad;  // keeps the block 16-aligned
};
constexpr int kMaxBootBlocks = 256;
std::atomic<int> g_boot_count{0};
void* g_boot_blocks[kMaxBootBlocks];

bool InBoot(const void* p) {
  auto* c = static_cast<const unsigned char*>(p);
  return c >= g_boot && c < g_boot + kBootBytes;
}

void* BootAlloc(size_t size, size_t align) {
  if (align < 16) align = 16;
  size_t used = g_boot_used.load();
  for (;;) {
    size_t start = (used + sizeof(BootBlock) + align - 1) & ~(align - 1);
    size_t end = start + size;
    if (end > kBootBytes) return nullptr;
    if (g_boot_used.compare_exchange_weak(used, end)) {
      void* p = g_boot + start;
      reinterpret_cast<BootBlock*>(static_cast<unsigned char*>(p) - sizeof(BootBlock))->size = size;
      int n = g_boot_count.fetch_add(1);
      if (n < kMaxBootBlocks) g_boot_blocks[n] = p;
      return p;  // static storage: already zeroed
    }
  }
}

size_t BootSize(const void* p) {
  return reinterpret_cast<const BootBlock*>(static_cast<const unsigned char*>(p) -
                                            sizeof(BootBlock))
      ->size;
}

template <typename Fn>
void Find(Fn* out, const char* name) {
  *out = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

bool Resolve() {
  if (g_resolved.load(std::memory_order_acquire) == 2) return true;
  int expected = 0;
  if (!g_resolved.compare_exchange_strong(expected, 1)) return false;  // another is resolving
  RealAllocator r{};
  Find(&r.malloc, "malloc");
  Find(&r.free, "free");
  Find(&r.calloc, "calloc");
  Find(&r.realloc, "realloc");
  Find(&r.posix_memalign, "posix_memalign");
  Find(&r.aligned_alloc, "aligned_alloc");
  Find(&r.memalign, "memalign");
  Find(&r.valloc, "valloc");
  Find(&r.pvalloc, "pvalloc");
  Find(&r.mmap, "mmap");
  Find(&r.munmap, "munmap");
  g_real = r;
  g_resolved.store(2, std::memory_order_release);
  return true;
}

// ---- Per-thread event rings. ----

enum EventType : uint64_t { kPad = 0, kAllocEvent = 1, kFreeEvent = 2, kStackEvent = 3 };
constexpr size_t kRingWords = 1u << 17;  // 1 MiB
constexpr int kMaxHeapFrames = 128;
constexpr int kSeenStacks = 4096;

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

constexpr int kMaxRings = 4096;
HeapRing* g_rings[kMaxRings];
std::atomic<int> g_ring_count{0};
std::atomic<bool> g_heap_on{false};
__thread HeapRing* t_ring __attribute__((tls_model("initial-exec"))) = nullptr;
__thread int t_busy __attribute__((tls_model("initial-exec"))) = 0;  // inside a shim already

HeapRing* ClaimRing() {
  for (int i = 0; i < g_ring_count.load() && i < kMaxRings; ++i) {
    int expected = 0;
    if (g_rings[i] && g_rings[i]->state.compare_exchange_strong(expected, 1)) return g_rings[i];
  }
  void* mem = g_real.mmap ? g_real.mmap(nullptr, sizeof(HeapRing), PROT_READ | PROT_WRITE,
                                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                          : MAP_FAILED;
  if (mem == MAP_FAILED) return nullptr;
  auto* ring = static_cast<HeapRing*>(mem);
  ring->state.store(1);
  int index = g_ring_count.fetch_add(1);
  if (index >= kMaxRings) return nullptr;
  g_rings[index] = ring;
  return ring;
}

HeapRing* MyRing() {
  HeapRing* ring = t_ring;
  if (ring) return ring;
  ring = ClaimRing();
  if (!ring) return nullptr;
  ring->tid = GetTid();
  ring->head.store(0);
  ring->tail.store(0);
  std::memset(ring->seen, 0, sizeof ring->seen);
  ResetWalker(&ring->walker, true);  // the rules hold for any thread, the last stack does not
  t_ring = ring;
  return ring;
}

void DrainRing(format::Writer& writer, HeapRing* ring);

// Room for `words` contiguous words; drains the ring itself when the writer is behind, so
// that no event is ever lost.
uint64_t* Reserve(HeapRing* ring, size_t words) {
  for (;;) {
    uint64_t head = ring->head.load(std::memory_order_relaxed);
    uint64_t tail = ring->tail.load(std::memory_order_acquire);
    size_t offset = head % kRingWords;
    size_t to_end = kRingWords - offset;
    size_t needed = words <= to_end ? words : to_end + words;
    if (head + needed - tail <= kRingWords) {
      if (words > to_end) {  // pad to the end, start again at 0
        ring->words[offset] = kPad << 56 | to_end;
        ring->head.store(head + to_end, std::memory_order_release);
        offset = 0;
      }
      return &ring->words[offset];
    }
    LockSession();
    if (g_session.writer) DrainRing(*g_session.writer, ring);
    UnlockSession();
  }
}

// Every this many words (some 700 events of the exact mode) a thread offers to do the writer's
// round: in a threadless session (session.h) the allocating threads are the only writers.
constexpr uint64_t kRoundWords = 4096;

void Publish(HeapRing* ring, size_t words) {
  uint64_t head = ring->head.load(std::memory_order_relaxed);
  ring->head.store(head + words, std::memory_order_release);
  if (head / kRoundWords != (head + words) / kRoundWords) WriteIfDue();
}

// Events are stamped with the time-stamp counter (half the cost of the vDSO clock here); the
// writer turns ticks into CLOCK_MONOTONIC nanoseconds with one fixed rate, measured when the
// collector starts. A fixed rate keeps the counter's order, which is what matching a release
// with a later reuse of its address (by another thread) needs.
uint64_t PreciseNow() { return __builtin_ia32_rdtsc(); }

uint64_t g_tick0 = 0, g_ns0 = 0;
// Nanoseconds per tick in 24.40 fixed point (a multiply and a shift per event, where a long
// double took the x87 unit); 0: not measured yet.
constexpr int kRateShift = 40;
uint64_t g_ns_per_tick_q40 = 0;
constexpr uint64_t kCalibrationNs = 2'000'000;

// Notes the clocks when the collector starts; the rate is measured from there at the first
// conversion (the writer's first drain, usually 100 ms later, so nobody waits for it).
void StartTickCalibration() {
  g_ns0 = NowNs();
  g_tick0 = __builtin_ia32_rdtsc();
}

// The rate over at least kCalibrationNs since the start (waits out the rest when asked sooner).
void FinishTickCalibration() {
  uint64_t ns_end, tick_end;
  while ((ns_end = NowNs()) - g_ns0 < kCalibrationNs) {
  }
  tick_end = __builtin_ia32_rdtsc();
  unsigned __int128 rate = uint64_t(1) << kRateShift;  // a counter that did not advance
  if (tick_end > g_tick0)
    rate = ((unsigned __int128)(ns_end - g_ns0) << kRateShift) / (tick_end - g_tick0);
  g_ns_per_tick_q40 = rate == 0 ? 1 : rate > UINT64_MAX ? UINT64_MAX : uint64_t(rate);
}

// With the session lock held (every caller drains under it).
uint64_t TicksToNs(uint64_t tick) {
  if (g_ns_per_tick_q40 == 0) FinishTickCalibration();
  __int128 ticks = int64_t(tick - g_tick0);  // a stamp taken a little before the start: < 0
  return g_ns0 + uint64_t(int64_t((ticks * g_ns_per_tick_q40) >> kRateShift));
}

// HOTLINE_HEAP_VERIFY=1 (read when the collector starts): every stack the walker gives is
// compared with unw_backtrace's, and the counts are written into the profile as statistics.
bool g_verify = false;
std::atomic<uint64_t> g_verified{0}, g_mismatched{0}, g_walked{0}, g_reused_frames{0}, g_gave_up{0};

// unw_backtrace's stack, without this library's frames, at most kMaxHeapFrames of it.
int LibunwindStack(uint64_t* frames) {
  // Made ready at its first use: libunwind opens a pipe of its own then, which a program whose
  // stacks the walker always follows never gets.
  static std::atomic<bool> ready{false};
  if (!ready.load(std::memory_order_acquire)) {
    InitUnwinder();
    ready.store(true, std::memory_order_release);
  }
  void* raw[kMaxHeapFrames + 8];
  int depth = unw_backtrace(raw, kMaxHeapFrames + 8);
  int skip = 0;
  while (skip < depth && IsRuntimeCode(raw[skip])) ++skip;
  depth -= skip;
  if (depth > kMaxHeapFrames) depth = kMaxHeapFrames;
  for (int i = 0; i < depth; ++i) frames[i] = uint64_t(raw[skip + i]);
  return depth > 0 ? depth : 0;
}

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

// The allocation's call stack: return addresses, innermost first, from `caller` on. The walker
// (stack_walk.h) gives it; libunwind where the walker gives up.
uint64_t CaptureStack(HeapRing* ring, const CallerFrame& caller) {
  static_assert(kMaxWalkFrames == kMaxHeapFrames);
  const ThreadSlot* slot = CurrentSlot();
  StackWalker& walker = ring->walker;
  uint64_t hash = 0;
  int depth = -1;
  const uint64_t reused_before = walker.reused_frames;
  if (slot)
    depth = WalkStack(&walker, caller.pc, caller.sp, caller.bp, slot->bounds.low, slot->bounds.high,
                      &hash);
  uint64_t own[kMaxHeapFrames];
  const bool walked = depth >= 0;
  if (!walked) {
    depth = LibunwindStack(own);
    hash = HashStack(own, depth);
  }
  if (depth == 0) return 0;
  // The walker's frames lie in walker.frames outermost first; libunwind's innermost first.
  auto frame = [&](int i) { return walked ? walker.frames[depth - 1 - i].pc : own[i]; };
  if (g_verify) {
    (walked ? g_walked : g_gave_up).fetch_add(1, std::memory_order_relaxed);
    g_reused_frames.fetch_add(walker.reused_frames - reused_before, std::memory_order_relaxed);
    uint64_t check[kMaxHeapFrames];
    int check_depth = LibunwindStack(check);
    bool same = check_depth == depth;
    for (int i = 0; same && i < depth; ++i) same = check[i] == frame(i);
    g_verified.fetch_add(1, std::memory_order_relaxed);
    if (!same) g_mismatched.fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t& seen = ring->seen[hash % kSeenStacks];
  if (seen != hash) {
    uint64_t* w = Reserve(ring, 3 + size_t(depth));
    w[0] = kStackEvent << 56 | uint64_t(3 + depth);
    w[1] = hash;
    w[2] = uint64_t(depth);
    for (int i = 0; i < depth; ++i) w[3 + i] = frame(i);
    Publish(ring, 3 + size_t(depth));
    seen = hash;
  }
  return hash;
}

// An allocation event's kind word: the AllocKind, and this bit when it was sampled.
constexpr uint64_t kSampledBit = 1u << 8;

void RecordAlloc(void* p, size_t size, format::AllocKind kind, const CallerFrame& frame,
                 bool sampled = false) {
  InRuntime guard;  // a sample landing here is the profiler's time
  HeapRing* ring = MyRing();
  if (!ring) return;
  uint64_t stack = CaptureStack(ring, frame);
  uint64_t* w = Reserve(ring, 6);
  w[0] = kAllocEvent << 56 | 6;
  w[1] = PreciseNow();
  w[2] = uint64_t(p);
  w[3] = size;
  w[4] = uint64_t(kind) | (sampled ? kSampledBit : 0);
  w[5] = stack;
  Publish(ring, 6);
}

// `time` is taken before the block is released, so that a reuse of the address by another
// thread always comes later.
void RecordFree(void* p, format::FreeKind kind, uint64_t size, uint64_t time) {
  InRuntime guard;
  HeapRing* ring = MyRing();
  if (!ring) return;
  uint64_t* w = Reserve(ring, 5);
  w[0] = kFreeEvent << 56 | 5;
  w[1] = time;
  w[2] = uint64_t(p);
  w[3] = uint64_t(kind);
  w[4] = size;
  Publish(ring, 5);
}

// ---- The sampled mode (`record --heap-sample`). ----
//
// The bytes a thread allocates are a line on which sampling points fall as a Poisson process,
// one per g_sample_bytes on average: an allocation is recorded when at least one point falls
// inside it, which happens with probability 1 - exp(-size / N), and the reader weighs it by the
// inverse (format.md, ALLOC). The gaps between points are exponential and memoryless, so after
// a sampled allocation the next gap is drawn afresh from its end. The common case is one
// thread-local subtraction and a compare.
//
// A release is recorded only for a block that was sampled: a counting filter answers "not
// sampled" for almost every other block with one load, and a table under a spin lock (touched
// only for sampled blocks and the filter's rare false positives) holds their addresses.

uint64_t g_sample_bytes = 0;  // 0: the exact mode
uint64_t g_sample_seed = 0;   // 0: seeded from the clock
std::atomic<uint64_t> g_sampler_threads{0};
__thread int64_t t_until_sample __attribute__((tls_model("initial-exec"))) = 0;
__thread uint64_t t_random __attribute__((tls_model("initial-exec"))) = 0;  // 0: not seeded

uint64_t SplitMix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Bytes to the next sampling point: exponential with mean g_sample_bytes (xorshift64*).
int64_t NextGap() {
  uint64_t x = t_random;
  x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
  t_random = x;
  double u = double(((x * 0x2545F4914F6CDD1Dull) >> 11) + 1) * 0x1p-53;  // (0, 1]
  double gap = -std::log(u) * double(g_sample_bytes);
  return gap < 0x1p62 ? int64_t(gap) + 1 : int64_t(1) << 62;
}

// Slow path of the sampling decision, when the thread's gap is used up by `size` bytes: true
// when a point fell inside the allocation (the gap was consumed by it). Seeds the thread's
// generator on its first allocation: the same seed and program give the same samples.
__attribute__((noinline)) bool PointFellInside(size_t size) {
  if (t_random == 0) {
    uint64_t ordinal = g_sampler_threads.fetch_add(1, std::memory_order_relaxed);
    uint64_t seed = g_sample_seed ? g_sample_seed : __builtin_ia32_rdtsc() ^ uint64_t(GetTid());
    t_random = SplitMix(seed + ordinal * 0x632BE59BD9B4E019ull) | 1;
    t_until_sample = NextGap() - int64_t(std::min<size_t>(size, size_t(1) << 62));
    if (t_until_sample > 0) return false;
  }
  t_until_sample = NextGap();
  return true;
}

class SampledBlocks {
 public:
  // One load: false means `address` is surely not a live sampled block.
  bool mayHold(uint64_t address) const {
    size_t slot = Slot(address);
    return (occupied_[slot / 64].load(std::memory_order_relaxed) >> (slot % 64)) & 1;
  }
  // Records a newly sampled block; false when there is no room (its release would be missed,
  // so the block is then not reported as sampled).
  __attribute__((noinline)) bool insert(uint64_t address) {
    Guard guard(lock_);
    if ((count_ + 1) * 2 > capacity_ && !grow()) return false;
    size_t mask = capacity_ - 1;
    size_t i = Hash(address) & mask;
    while (keys_[i] && keys_[i] != address) i = (i + 1) & mask;
    if (keys_[i] == address) return true;  // cannot happen: the block was released first
    keys_[i] = address;
    ++count_;
    std::atomic<uint8_t>& f = filter_[Slot(address)];
    uint8_t v = f.load(std::memory_order_relaxed);
    if (v != kSticky) f.store(uint8_t(v + 1), std::memory_order_relaxed);
    if (v == 0) setOccupied(Slot(address), true);
    return true;
  }
  // Removes `address` when it is a live sampled block: true when it was.
  __attribute__((noinline)) bool take(uint64_t address) {
    Guard guard(lock_);
    if (!capacity_) return false;
    size_t mask = capacity_ - 1;
    size_t i = Hash(address) & mask;
    while (keys_[i] && keys_[i] != address) i = (i + 1) & mask;
    if (!keys_[i]) return false;
    // Backward-shift deletion keeps every probe chain unbroken without tombstones.
    for (size_t j = (i + 1) & mask; keys_[j]; j = (j + 1) & mask) {
      size_t home = Hash(keys_[j]) & mask;
      if (((j - home) & mask) >= ((j - i) & mask)) {
        keys_[i] = keys_[j];
        i = j;
      }
    }
    keys_[i] = 0;
    --count_;
    std::atomic<uint8_t>& f = filter_[Slot(address)];
    uint8_t v = f.load(std::memory_order_relaxed);
    if (v != kSticky) f.store(uint8_t(v - 1), std::memory_order_relaxed);
    if (v == 1) setOccupied(Slot(address), false);
    return true;
  }
  // In a forked child: the parent's blocks are not the child's, and the lock may have been
  // held by a thread that does not exist here.
  void forget() {
    lock_.clear();
    for (auto& f : filter_) f.store(0, std::memory_order_relaxed);
    for (auto& o : occupied_) o.store(0, std::memory_order_relaxed);
    if (keys_) std::memset(keys_, 0, capacity_ * sizeof(uint64_t));
    count_ = 0;
  }

 private:
  static constexpr uint8_t kSticky = 255;  // a saturated counter never comes down
  static uint64_t Hash(uint64_t address) { return (address >> 4) * 0x9E3779B97F4A7C15ull; }
  static size_t Slot(uint64_t address) { return size_t(Hash(address) >> 48); }

  struct Guard {
    explicit Guard(std::atomic_flag& f) : flag(f) {
      while (flag.test_and_set(std::memory_order_acquire)) {
      }
    }
    ~Guard() { flag.clear(std::memory_order_release); }
    std::atomic_flag& flag;
  };

  bool grow() {
    size_t capacity = capacity_ ? capacity_ * 2 : 1u << 14;
    void* mem = g_real.mmap
                    ? g_real.mmap(nullptr, capacity * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                    : MAP_FAILED;
    if (mem == MAP_FAILED) return false;
    auto* keys = static_cast<uint64_t*>(mem);
    for (size_t i = 0; i < capacity_; ++i) {
      if (!keys_[i]) continue;
      size_t j = Hash(keys_[i]) & (capacity - 1);
      while (keys[j]) j = (j + 1) & (capacity - 1);
      keys[j] = keys_[i];
    }
    if (keys_) g_real.munmap(keys_, capacity_ * sizeof(uint64_t));
    keys_ = keys;
    capacity_ = capacity;
    return true;
  }

  // Under the lock: sets or clears the slot's bit in occupied_.
  void setOccupied(size_t slot, bool on) {
    std::atomic<uint64_t>& word = occupied_[slot / 64];
    uint64_t bit = uint64_t(1) << (slot % 64);
    uint64_t v = word.load(std::memory_order_relaxed);
    word.store(on ? v | bit : v & ~bit, std::memory_order_relaxed);
  }

  // The counts (under the lock), and one bit per slot, set while its count is not 0: the bits
  // are what every release reads, 8 KiB that stay in the L1 cache where the 64 KiB of counts
  // would miss it on most releases.
  std::atomic<uint8_t> filter_[1 << 16] = {};
  std::atomic<uint64_t> occupied_[(1 << 16) / 64] = {};
  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
  uint64_t* keys_ = nullptr;  // open addressing, 0 = empty
  size_t capacity_ = 0, count_ = 0;
};
SampledBlocks g_sampled;

// ---- Writer side: stack hash → stack node id. ----

struct StackSlot {
  uint64_t hash, node;
};
StackSlot* g_stacks = nullptr;
size_t g_stacks_capacity = 0, g_stacks_count = 0;

uint64_t* StackNode(uint64_t hash, bool insert) {
  if (insert && (g_stacks_count + 1) * 2 > g_stacks_capacity) {
    size_t capacity = g_stacks_capacity ? g_stacks_capacity * 2 : 4096;
    auto* grown = static_cast<StackSlot*>(calloc(capacity, sizeof(StackSlot)));
    if (!grown) return nullptr;
    for (size_t i = 0; i < g_stacks_capacity; ++i) {
      if (!g_stacks[i].hash) continue;
      size_t j = g_stacks[i].hash & (capacity - 1);
      while (grown[j].hash) j = (j + 1) & (capacity - 1);
      grown[j] = g_stacks[i];
    }
    free(g_stacks);
    g_stacks = grown;
    g_stacks_capacity = capacity;
  }
  if (!g_stacks_capacity) return nullptr;
  size_t mask = g_stacks_capacity - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    if (g_stacks[i].hash == hash) return &g_stacks[i].node;
    if (!g_stacks[i].hash) {
      if (!insert) return nullptr;
      g_stacks[i].hash = hash;
      ++g_stacks_count;
      return &g_stacks[i].node;
    }
  }
}

// An event's time. A thread's allocation and its release can come within one nanosecond of
// each other on a fast machine (10 ns apart is usual), and readers put a release first at equal
// times (for a release and another thread's reuse of the block): the later of two events of one
// thread at one time is stamped a nanosecond on, as the ring has them.
uint64_t EventNs(HeapRing* ring, uint64_t tick) {
  uint64_t ns = TicksToNs(tick);
  if (ns == ring->last_ns) ++ns;
  ring->last_ns = ns;
  return ns;
}

void DrainRing(format::Writer& writer, HeapRing* ring) {
  uint64_t head = ring->head.load(std::memory_order_acquire);
  uint64_t tail = ring->tail.load(std::memory_order_relaxed);
  while (tail < head) {
    const uint64_t* w = &ring->words[tail % kRingWords];
    uint64_t type = w[0] >> 56, words = w[0] & 0xFFFFFFFFu;
    if (words == 0) break;  // cannot happen for a well-formed ring; never spin on it
    if (type == kStackEvent) {
      uint64_t node = 0;
      for (uint64_t i = w[2]; i-- > 0;) node = writer.internStackNode(node, w[3 + i]);
      if (uint64_t* slot = StackNode(w[1], true)) *slot = node;
    } else if (type == kAllocEvent) {
      uint64_t* node = StackNode(w[5], false);
      writer.add(format::AllocRecord{EventNs(ring, w[1]), uint64_t(ring->tid), w[2], w[3],
                                     node ? *node : 0, format::AllocKind(w[4] & 0xFF),
                                     w[4] & kSampledBit ? g_sample_bytes : 0});
    } else if (type == kFreeEvent) {
      writer.add(format::FreeRecord{EventNs(ring, w[1]), uint64_t(ring->tid), w[2],
                                    format::FreeKind(w[3]), w[4]});
    }
    tail += words;
  }
  ring->tail.store(tail, std::memory_order_release);
}

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

inline bool Ready() { return g_resolved.load(std::memory_order_acquire) == 2 || Resolve(); }

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

// A sampled event is rare (one per g_sample_bytes allocated): each one offers the writer's
// round, so that a threadless session drains and flushes as often as a writer thread would.
void RecordSampledAlloc(void* p, size_t size, format::AllocKind kind, const CallerFrame& frame) {
  Busy busy;
  if (g_sampled.insert(uint64_t(p))) RecordAlloc(p, size, kind, frame, true);
  InRuntime guard;
  WriteIfDue();
}

// Before a block is released: whether it was sampled (it is then forgotten).
__attribute__((always_inline)) inline bool TakeSampledRelease(const void* p) {
  return g_sampled.mayHold(uint64_t(p)) && g_sampled.take(uint64_t(p));
}

void RecordSampledRelease(void* p, format::FreeKind kind, uint64_t size) {
  Busy busy;
  RecordFree(p, kind, size, PreciseNow());
  InRuntime guard;
  WriteIfDue();
}

// The shape of every sampled allocation: the real call, then the decision.
template <typename Call>
inline void* SampledAllocation(Call call, size_t size, format::AllocKind kind, const void* caller,
                               const CallerFrame& frame) {
  void* p;
  {
    Busy busy;
    p = call();
  }
  if (p && TakeSample(size, caller)) RecordSampledAlloc(p, size, kind, frame);
  return p;
}

}  // namespace

bool HeapOn() { return g_heap_on.load(); }

void StartHeap(format::Writer& writer, uint64_t now, uint64_t sample_bytes, uint64_t seed) {
  Resolve();
  const char* verify = getenv("HOTLINE_HEAP_VERIFY");
  g_verify = verify && std::strcmp(verify, "1") == 0;
  StartTickCalibration();
  if (sample_bytes) {
    g_sample_bytes = sample_bytes;
    g_sample_seed = seed;
    writer.add(format::StatsRecord{now, writer.internString("heap_sample_bytes"), sample_bytes});
  }
  // What the bootstrap arena served before the real allocator was found still counts.
  int boot = g_boot_count.load();
  for (int i = 0; i < boot && i < kMaxBootBlocks; ++i)
    writer.add(format::AllocRecord{now, uint64_t(GetTid()), uint64_t(g_boot_blocks[i]),
                                   BootSize(g_boot_blocks[i]), 0, format::AllocKind::kMalloc});
  g_heap_on.store(true);
}

namespace {

// The verification's counts (HOTLINE_HEAP_VERIFY), written whenever they changed: a reader
// takes the last of each.
uint64_t g_verify_written = 0;  // heap_verify_stacks as last written

void WriteVerifyStats(format::Writer& writer) {
  uint64_t verified = g_verified.load(std::memory_order_relaxed);
  if (verified == g_verify_written) return;
  g_verify_written = verified;
  uint64_t now = NowNs();
  auto stat = [&](const char* name, const std::atomic<uint64_t>& value) {
    writer.add(
        format::StatsRecord{now, writer.internString(name), value.load(std::memory_order_relaxed)});
  };
  stat("heap_verify_stacks", g_verified);
  stat("heap_verify_mismatches", g_mismatched);
  stat("heap_verify_walked", g_walked);
  stat("heap_verify_reused_frames", g_reused_frames);
  stat("heap_verify_libunwind", g_gave_up);
}

}  // namespace

void DrainHeapLocked(format::Writer& writer) {
  if (g_verify) WriteVerifyStats(writer);
  int count = g_ring_count.load();
  for (int i = 0; i < count && i < kMaxRings; ++i) {
    HeapRing* ring = g_rings[i];
    if (!ring) continue;
    int state = ring->state.load();
    if (state == 0) continue;
    DrainRing(writer, ring);
    if (state == 2) ring->state.store(0);
  }
}

void EndThreadHeap() {
  HeapRing* ring = t_ring;
  if (!ring) return;
  t_ring = nullptr;
  LockSession();
  if (g_session.writer) DrainRing(*g_session.writer, ring);
  ring->state.store(2);
  UnlockSession();
}

void ResetHeapAfterFork() {
  HeapRing* mine = t_ring;
  int count = g_ring_count.load();
  for (int i = 0; i < count && i < kMaxRings; ++i) {
    HeapRing* ring = g_rings[i];
    if (!ring) continue;
    ring->tail.store(ring->head.load());  // the parent writes those events
    std::memset(ring->seen, 0, sizeof ring->seen);
    if (ring != mine) ring->state.store(0);
  }
  if (mine) mine->tid = GetTid();
  if (g_stacks) std::memset(g_stacks, 0, g_stacks_capacity * sizeof(StackSlot));
  g_stacks_count = 0;
  g_sampled.forget();
  for (auto* count : {&g_verified, &g_mismatched, &g_walked, &g_reused_frames, &g_gave_up})
    count->store(0, std::memory_order_relaxed);
  g_verify_written = 0;
}

}  // namespace hotline::rt

using namespace hotline::rt;
using hotline::format::AllocKind;
using hotline::format::FreeKind;

HOTLINE_EXPORT void* malloc(size_t size) {
  if (!Ready()) return BootAlloc(size, 16);
  if (SampledMode())
    return SampledAllocation([&] { return g_real.malloc(size); }, size, AllocKind::kMalloc,
                             __builtin_return_address(0), HOTLINE_CALLER_FRAME);
  if (!Recording(__builtin_return_address(0))) return g_real.malloc(size);
  Busy busy;
  void* p = g_real.malloc(size);
  if (p) RecordAlloc(p, size, AllocKind::kMalloc, HOTLINE_CALLER_FRAME);
  return p;
}

HOTLINE_EXPORT void free(void* p) {
  if (!p || InBoot(p)) return;
  if (!Ready()) return;  // cannot happen: only boot blocks exist before resolution
  if (SampledMode()) {
    if (TakeSampledRelease(p)) RecordSampledRelease(p, FreeKind::kFree, 0);
    return g_real.free(p);
  }
  if (!Recording(__builtin_return_address(0))) return g_real.free(p);
  Busy busy;
  RecordFree(p, FreeKind::kFree, 0, PreciseNow());
  g_real.free(p);
}

HOTLINE_EXPORT void* calloc(size_t count, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (!Ready()) return BootAlloc(bytes, 16);
  if (SampledMode())
    return SampledAllocation([&] { return g_real.calloc(count, size); }, bytes, AllocKind::kCalloc,
                             __builtin_return_address(0), HOTLINE_CALLER_FRAME);
  if (!Recording(__builtin_return_address(0))) return g_real.calloc(count, size);
  Busy busy;
  void* p = g_real.calloc(count, size);
  if (p) RecordAlloc(p, bytes, AllocKind::kCalloc, HOTLINE_CALLER_FRAME);
  return p;
}

HOTLINE_EXPORT void* realloc(void* old, size_t size) {
  if (old && InBoot(old)) {
    // A bootstrap block moves into the real heap; the arena never frees.
    void* p = malloc(size);
    if (p) std::memcpy(p, old, BootSize(old) < size ? BootSize(old) : size);
    return p;
  }
  if (!Ready()) return BootAlloc(size, 16);
  if (SampledMode()) {
    bool was_sampled = old && TakeSampledRelease(old);
    uint64_t before = was_sampled ? PreciseNow() : 0;
    void* p =
        SampledAllocation([&] { return g_real.realloc(old, size); }, size, AllocKind::kRealloc,
                          __builtin_return_address(0), HOTLINE_CALLER_FRAME);
    if (was_sampled) {
      Busy busy;
      if (p || size == 0) {
        RecordFree(old, FreeKind::kRealloc, 0, before);
      } else {
        g_sampled.insert(uint64_t(old));  // realloc failed: the old block lives on
      }
    }
    return p;
  }
  if (!Recording(__builtin_return_address(0))) return g_real.realloc(old, size);
  Busy busy;
  uint64_t before = PreciseNow();
  void* p = g_real.realloc(old, size);
  if (old && (p || size == 0)) RecordFree(old, FreeKind::kRealloc, 0, before);
  if (p) RecordAlloc(p, size, AllocKind::kRealloc, HOTLINE_CALLER_FRAME);
  return p;
}

HOTLINE_EXPORT int posix_memalign(void** out, size_t align, size_t size) {
  if (!Ready()) {
    *out = BootAlloc(size, align);
    return *out ? 0 : ENOMEM;
  }
  if (SampledMode()) {
    int result = 0;
    SampledAllocation(
        [&]() -> void* {
          result = g_real.posix_memalign(out, align, size);
          return result == 0 ? *out : nullptr;
        },
        size, AllocKind::kAligned, __builtin_return_address(0), HOTLINE_CALLER_FRAME);
    return result;
  }
  if (!Recording(__builtin_return_address(0))) return g_real.posix_memalign(out, align, size);
  Busy busy;
  int result = g_real.posix_memalign(out, align, size);
  if (result == 0) RecordAlloc(*out, size, AllocKind::kAligned, HOTLINE_CALLER_FRAME);
  return result;
}

// aligned_alloc, memalign, valloc and pvalloc share one shape.
#define HOTLINE_ALIGNED_SHIM(NAME, PARAMS, ARGS, SIZE, BOOT_ALIGN)                          \
  HOTLINE_EXPORT void* NAME PARAMS {                                                        \
    if (!Ready()) return BootAlloc(SIZE, BOOT_ALIGN);                                       \
    if (SampledMode())                                                                      \
      return SampledAllocation([&] { return g_real.NAME ARGS; }, SIZE, AllocKind::kAligned, \
                               __builtin_return_address(0), HOTLINE_CALLER_FRAME);          \
    if (!Recording(__builtin_return_address(0))) return g_real.NAME ARGS;                   \
    Busy busy;                                                                              \
    void* p = g_real.NAME ARGS;                                                             \
    if (p) RecordAlloc(p, SIZE, AllocKind::kAligned, HOTLINE_CALLER_FRAME);                 \
    return p;                                                                               \
  }
HOTLINE_ALIGNED_SHIM(aligned_alloc, (size_t align, size_t size), (align, size), size, align)
HOTLINE_ALIGNED_SHIM(memalign, (size_t align, size_t size), (align, size), size, align)
HOTLINE_ALIGNED_SHIM(valloc, (size_t size), (size), size, 4096)
HOTLINE_ALIGNED_SHIM(pvalloc, (size_t size), (size), size, 4096)
#undef HOTLINE_ALIGNED_SHIM

HOTLINE_EXPORT void* mmap(void* address, size_t length, int prot, int flags, int fd, off_t offset) {
  if (!Ready() || !g_real.mmap) {
    errno = ENOSYS;
    return MAP_FAILED;
  }
  if (!(flags & MAP_ANONYMOUS)) return g_real.mmap(address, length, prot, flags, fd, offset);
  if (SampledMode()) {
    void* p = MAP_FAILED;
    SampledAllocation(
        [&]() -> void* {
          p = g_real.mmap(address, length, prot, flags, fd, offset);
          return p == MAP_FAILED ? nullptr : p;
        },
        length, AllocKind::kMmap, __builtin_return_address(0), HOTLINE_CALLER_FRAME);
    return p;
  }
  if (!Recording(__builtin_return_address(0)))
    return g_real.mmap(address, length, prot, flags, fd, offset);
  Busy busy;
  void* p = g_real.mmap(address, length, prot, flags, fd, offset);
  if (p != MAP_FAILED) RecordAlloc(p, length, AllocKind::kMmap, HOTLINE_CALLER_FRAME);
  return p;
}

HOTLINE_EXPORT int munmap(void* address, size_t length) {
  if (!Ready() || !g_real.munmap) {
    errno = ENOSYS;
    return -1;
  }
  if (SampledMode()) {
    if (TakeSampledRelease(address)) RecordSampledRelease(address, FreeKind::kMunmap, length);
    return g_real.munmap(address, length);
  }
  if (!Recording(__builtin_return_address(0))) return g_real.munmap(address, length);
  Busy busy;
  uint64_t before = PreciseNow();
  int result = g_real.munmap(address, length);
  if (result == 0) RecordFree(address, FreeKind::kMunmap, length, before);
  return result;
}

// operator new and delete, all their forms, replaced as the C++ standard allows. Each calls the
// real one (libstdc++'s, which calls malloc: unrecorded under Busy) so that bad_alloc,
// new-handlers and nothrow behave exactly as before.
namespace {

using Nothrow = const std::nothrow_t&;
using Align = std::align_val_t;

template <typename Fn, typename... Args>
void* NewWith(Fn real, AllocKind kind, void* caller, CallerFrame frame, size_t size, Args... args) {
  if (!real) return nullptr;
  if (SampledMode())
    return SampledAllocation([&] { return real(size, args...); }, size, kind, caller, frame);
  if (!Recording(caller)) return real(size, args...);
  Busy busy;
  void* p = real(size, args...);
  if (p) RecordAlloc(p, size, kind, frame);
  return p;
}

template <typename Fn, typename... Args>
void DeleteWith(Fn real, FreeKind kind, void* caller, void* p, Args... args) {
  if (!real || !p) return;
  if (SampledMode()) {
    if (TakeSampledRelease(p)) RecordSampledRelease(p, kind, 0);
    return real(p, args...);
  }
  if (!Recording(caller)) return real(p, args...);
  Busy busy;
  RecordFree(p, kind, 0, PreciseNow());
  real(p, args...);
}

}  // namespace

#define HOTLINE_REAL(FN_TYPE, MANGLED) \
  static FN_TYPE real = reinterpret_cast<FN_TYPE>(dlsym(RTLD_NEXT, MANGLED))
#define HOTLINE_NEW_FORM(MANGLED, KIND, PARAMS, ...)                                         \
  __attribute__((visibility("default"))) void* operator new PARAMS {                         \
    using Fn = void*(*)PARAMS;                                                               \
    HOTLINE_REAL(Fn, MANGLED);                                                               \
    return NewWith(real, AllocKind::KIND, __builtin_return_address(0), HOTLINE_CALLER_FRAME, \
                   __VA_ARGS__);                                                             \
  }
#define HOTLINE_NEW_ARRAY_FORM(MANGLED, KIND, PARAMS, ...)                                   \
  __attribute__((visibility("default"))) void* operator new[] PARAMS {                       \
    using Fn = void*(*)PARAMS;                                                               \
    HOTLINE_REAL(Fn, MANGLED);                                                               \
    return NewWith(real, AllocKind::KIND, __builtin_return_address(0), HOTLINE_CALLER_FRAME, \
                   __VA_ARGS__);                                                             \
  }
#define HOTLINE_DELETE_FORM(OP, MANGLED, KIND, PARAMS, ...)                     \
  __attribute__((visibility("default"))) void OP PARAMS noexcept {              \
    using Fn = void(*) PARAMS;                                                  \
    HOTLINE_REAL(Fn, MANGLED);                                                  \
    DeleteWith(real, FreeKind::KIND, __builtin_return_address(0), __VA_ARGS__); \
  }

HOTLINE_NEW_FORM("_Znwm", kNew, (size_t s), s)
HOTLINE_NEW_ARRAY_FORM("_Znam", kNewArray, (size_t s), s)
HOTLINE_NEW_FORM("_ZnwmRKSt9nothrow_t", kNew, (size_t s, Nothrow t) noexcept, s, t)
HOTLINE_NEW_ARRAY_FORM("_ZnamRKSt9nothrow_t", kNewArray, (size_t s, Nothrow t) noexcept, s, t)
HOTLINE_NEW_FORM("_ZnwmSt11align_val_t", kNew, (size_t s, Align a), s, a)
HOTLINE_NEW_ARRAY_FORM("_ZnamSt11align_val_t", kNewArray, (size_t s, Align a), s, a)
HOTLINE_NEW_FORM("_ZnwmSt11align_val_tRKSt9nothrow_t", kNew,
                 (size_t s, Align a, Nothrow t) noexcept, s, a, t)
HOTLINE_NEW_ARRAY_FORM("_ZnamSt11align_val_tRKSt9nothrow_t", kNewArray,
                       (size_t s, Align a, Nothrow t) noexcept, s, a, t)
HOTLINE_DELETE_FORM(operator delete, "_ZdlPv", kDelete, (void* p), p)
HOTLINE_DELETE_FORM(operator delete[], "_ZdaPv", kDeleteArray, (void* p), p)
HOTLINE_DELETE_FORM(operator delete, "_ZdlPvm", kDelete, (void* p, size_t s), p, s)
HOTLINE_DELETE_FORM(operator delete[], "_ZdaPvm", kDeleteArray, (void* p, size_t s), p, s)
HOTLINE_DELETE_FORM(operator delete, "_ZdlPvRKSt9nothrow_t", kDelete, (void* p, Nothrow t), p, t)
HOTLINE_DELETE_FORM(operator delete[], "_ZdaPvRKSt9nothrow_t", kDeleteArray, (void* p, Nothrow t),
                    p, t)
HOTLINE_DELETE_FORM(operator delete, "_ZdlPvSt11align_val_t", kDelete, (void* p, Align a), p, a)
HOTLINE_DELETE_FORM(operator delete[], "_ZdaPvSt11align_val_t", kDeleteArray, (void* p, Align a), p,
                    a)
HOTLINE_DELETE_FORM(operator delete, "_ZdlPvmSt11align_val_t", kDelete,
                    (void* p, size_t s, Align a), p, s, a)
HOTLINE_DELETE_FORM(operator delete[], "_ZdaPvmSt11align_val_t", kDeleteArray,
                    (void* p, size_t s, Align a), p, s, a)
HOTLINE_DELETE_FORM(operator delete, "_ZdlPvSt11align_val_tRKSt9nothrow_t", kDelete,
                    (void* p, Align a, Nothrow t), p, a, t)
HOTLINE_DELETE_FORM(operator delete[], "_ZdaPvSt11align_val_tRKSt9nothrow_t", kDeleteArray,
                    (void* p, Align a, Nothrow t), p, a, t)

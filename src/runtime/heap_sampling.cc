// The heap collector's sampled mode (`record --heap-sample`).
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
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "runtime/heap_internal.h"
#include "runtime/session.h"
#include "runtime/threads.h"

namespace hotline::rt {

uint64_t g_sample_bytes = 0;
uint64_t g_sample_seed = 0;
__thread int64_t t_until_sample __attribute__((tls_model("initial-exec"))) = 0;

namespace {

std::atomic<uint64_t> g_sampler_threads{0};
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

}  // namespace

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

struct SampledBlocks::Guard {
  explicit Guard(std::atomic_flag& f) : flag(f) {
    while (flag.test_and_set(std::memory_order_acquire)) {
    }
  }
  ~Guard() { flag.clear(std::memory_order_release); }
  std::atomic_flag& flag;
};

bool SampledBlocks::insert(uint64_t address) {
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

bool SampledBlocks::take(uint64_t address) {
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

void SampledBlocks::forget() {
  lock_.clear();
  for (auto& f : filter_) f.store(0, std::memory_order_relaxed);
  for (auto& o : occupied_) o.store(0, std::memory_order_relaxed);
  if (keys_) std::memset(keys_, 0, capacity_ * sizeof(uint64_t));
  count_ = 0;
}

bool SampledBlocks::grow() {
  size_t capacity = capacity_ ? capacity_ * 2 : 1u << 14;
  void* mem = g_real.mmap ? g_real.mmap(nullptr, capacity * sizeof(uint64_t),
                                        PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
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
void SampledBlocks::setOccupied(size_t slot, bool on) {
  std::atomic<uint64_t>& word = occupied_[slot / 64];
  uint64_t bit = uint64_t(1) << (slot % 64);
  uint64_t v = word.load(std::memory_order_relaxed);
  word.store(on ? v | bit : v & ~bit, std::memory_order_relaxed);
}

SampledBlocks g_sampled;

// A sampled event is rare (one per g_sample_bytes allocated): each one offers the writer's
// round, so that a threadless session drains and flushes as often as a writer thread would.
void RecordSampledAlloc(void* p, size_t size, format::AllocKind kind, const CallerFrame& frame) {
  Busy busy;
  if (g_sampled.insert(uint64_t(p))) RecordAlloc(p, size, kind, frame, true);
  InRuntime guard;
  WriteIfDue();
}

void RecordSampledRelease(void* p, format::FreeKind kind, uint64_t size) {
  Busy busy;
  RecordFree(p, kind, size, PreciseNow());
  InRuntime guard;
  WriteIfDue();
}

}  // namespace hotline::rt

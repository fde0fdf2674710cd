// The heap collector's writer side: the events of the threads' rings (heap.cc) become ALLOC and
// FREE records, their stacks stack nodes and their time-stamp counter ticks nanoseconds.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "runtime/heap_internal.h"
#include "runtime/session.h"

namespace hotline::rt {
namespace {

uint64_t g_tick0 = 0, g_ns0 = 0;
// Nanoseconds per tick in 24.40 fixed point (a multiply and a shift per event, where a long
// double took the x87 unit); 0: not measured yet.
constexpr int kRateShift = 40;
uint64_t g_ns_per_tick_q40 = 0;
constexpr uint64_t kCalibrationNs = 2'000'000;

}  // namespace

// Notes the clocks when the collector starts; the rate is measured from there at the first
// conversion (the writer's first drain, usually 100 ms later, so nobody waits for it).
void StartTickCalibration() {
  g_ns0 = NowNs();
  g_tick0 = __builtin_ia32_rdtsc();
}

namespace {

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

}  // namespace

void DrainRing(format::Writer& writer, HeapRing* ring) {
  uint64_t head = ring->head.load(std::memory_order_acquire);
  uint64_t tail = ring->tail.load(std::memory_order_relaxed);
  while (tail < head) {
    const uint64_t* w = &ring->words[tail % kRingWords];
    uint64_t type = w[0] >> 56, words = w[0] & 0xFFFFFFFFu;
    if (words == 0) break;  // cannot happen for a well-formed ring; never spin on it
    if (type == kStackEvent) {
      // A stack already written (sent again by a thread whose small cache of sent stacks forgot
      // it, or first sent by another thread) is one probe, not a probe per frame.
      uint64_t* slot = StackNode(w[1], true);
      if (!slot || *slot == 0) {
        uint64_t node = 0;
        for (uint64_t i = w[2]; i-- > 0;) node = writer.internStackNode(node, w[3 + i]);
        if (slot) *slot = node;
      }
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

void ForgetStackNodes() {
  if (g_stacks) std::memset(g_stacks, 0, g_stacks_capacity * sizeof(StackSlot));
  g_stacks_count = 0;
}

}  // namespace hotline::rt

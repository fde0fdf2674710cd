// The heap collector's core (heap.h, docs/heap.md): each allocating thread's ring of events,
// what an allocation or a release puts into it (an allocation its call stack too), and the
// collector's start, drains, thread ends and forks. The shims that call it are in
// heap_shims.cc, the writer side that turns the events into records in heap_records.cc.
#include "runtime/heap.h"

#include <sys/mman.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "runtime/heap_internal.h"
#include "runtime/modules.h"
#include "runtime/session.h"
#include "runtime/signals.h"
#include "runtime/stack_walk.h"
#include "runtime/threads.h"
#include "runtime/unwind.h"

namespace hotline::rt {

std::atomic<bool> g_heap_on{false};

namespace {

// ---- Per-thread event rings. ----

constexpr int kMaxRings = 4096;
HeapRing* g_rings[kMaxRings];
std::atomic<int> g_ring_count{0};
__thread HeapRing* t_ring __attribute__((tls_model("initial-exec"))) = nullptr;

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

}  // namespace

void RecordAlloc(void* p, size_t size, format::AllocKind kind, const CallerFrame& frame,
                 bool sampled) {
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
  ForgetStackNodes();
  g_sampled.forget();
  for (auto* count : {&g_verified, &g_mismatched, &g_walked, &g_reused_frames, &g_gave_up})
    count->store(0, std::memory_order_relaxed);
  g_verify_written = 0;
}

}  // namespace hotline::rt

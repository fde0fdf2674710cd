#include "runtime/trace.h"

#include <pthread.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <utility>

#include "base/varint.h"
#include "runtime/session.h"
#include "runtime/threads.h"

#define HOTLINE_HOOK extern "C" __attribute__((visibility("default"), no_instrument_function))

namespace hotline::rt {
namespace {

// ---- The process-wide function table: entry address → small id, lock-free. ----

constexpr uint32_t kFunctionCapacity = 1u << 20;
struct FunctionSlot {
  std::atomic<uint64_t> address;
  std::atomic<uint32_t> id;
};
FunctionSlot* g_function_slots = nullptr;
std::atomic<uint64_t>* g_function_address = nullptr;  // by id
std::atomic<uint32_t> g_function_next{1};
uint32_t g_function_emitted = 0;  // writer side: ids below this have a TRACE_FUNCTION record

std::atomic<int> g_mode{0};
// Which path the hooks take, set once by InitTrace before the program's threads exist (so read
// without ordering): timed mode's shadow stack and events, or counts mode's call-site table.
bool g_timed_hooks = false;
uint64_t g_tick_ns_q32 = 0;
std::atomic<uint64_t> g_events_dropped{0};
std::atomic<uint64_t> g_unmatched_exits{0};
std::atomic<uint64_t> g_sizes_without_call{0};
// Timed mode, in a forked child: how many frames its stream re-enters first (STATS
// `trace_inherited_frames`): not calls of the child's.
uint64_t g_inherited_frames = 0;

void* MapZeroed(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

inline uint64_t Mix(uint64_t x) {
  x ^= x >> 31;
  x *= 0x9E3779B97F4A7C15ull;
  return x ^ (x >> 29);
}

uint32_t GlobalFunctionId(uint64_t address) {
  uint32_t mask = kFunctionCapacity - 1;
  for (uint32_t i = uint32_t(Mix(address)) & mask, probes = 0; probes < kFunctionCapacity;
       i = (i + 1) & mask, ++probes) {
    FunctionSlot& slot = g_function_slots[i];
    uint64_t seen = slot.address.load(std::memory_order_acquire);
    if (seen == 0) {
      if (!slot.address.compare_exchange_strong(seen, address)) {
        if (seen != address) continue;  // another function took the slot
      } else {
        uint32_t id = g_function_next.fetch_add(1);
        if (id >= kFunctionCapacity) return 0;
        g_function_address[id].store(address, std::memory_order_release);
        slot.id.store(id, std::memory_order_release);
        return id;
      }
    } else if (seen != address) {
      continue;
    }
    uint32_t id;
    while ((id = slot.id.load(std::memory_order_acquire)) == 0) {
    }  // the inserting thread is between its two stores
    return id;
  }
  return 0;
}

// ---- Timed mode: event buffers. ----

constexpr size_t kEventBufferBytes = 256 * 1024;
// Two varints, and the byte past them that the two-byte store of a short varint may write.
constexpr size_t kMaxEventBytes = 2 * 10 + 1;
constexpr int kMaxBuffers = 512;  // 128 MiB: past that, events are dropped and counted

// The hooks append to `data` through their thread's write position (TraceThread::pos); `size`
// is set when the buffer is handed over. Most events are one byte: the others count their bytes
// past the first in `tail_bytes`, so that the events are the bytes less those (counted after
// the write position moves: a reader that reads it first may overcount, never undercount).
struct EventBuffer {
  EventBuffer* next;
  uint64_t tid, base_tick;
  uint32_t size;
  std::atomic<uint32_t> tail_bytes;
  uint8_t data[kEventBufferBytes];
};

pthread_mutex_t g_buffers_lock = PTHREAD_MUTEX_INITIALIZER;
EventBuffer* g_full_head = nullptr;  // newest first
EventBuffer* g_free = nullptr;
int g_buffers_made = 0;

EventBuffer* TakeBuffer(uint64_t tid, uint64_t tick) {
  pthread_mutex_lock(&g_buffers_lock);
  EventBuffer* b = g_free;
  if (b) {
    g_free = b->next;
  } else if (g_buffers_made < kMaxBuffers) {
    b = static_cast<EventBuffer*>(MapZeroed(sizeof(EventBuffer)));
    if (b) ++g_buffers_made;
  }
  pthread_mutex_unlock(&g_buffers_lock);
  if (!b) return nullptr;
  b->next = nullptr;
  b->tid = tid;
  b->base_tick = tick;
  b->size = 0;
  b->tail_bytes.store(0, std::memory_order_relaxed);
  return b;
}

void HandOver(EventBuffer* b) {
  pthread_mutex_lock(&g_buffers_lock);
  b->next = g_full_head;
  g_full_head = b;
  pthread_mutex_unlock(&g_buffers_lock);
}

// ---- Per-thread state. ----

constexpr uint32_t kShadowCapacity = 1u << 16;
constexpr int kCacheSize = 256;

// Timed mode, per caller function: the callee it entered last in the event stream, which the
// one-byte repeated entry names (TRACE_EVENTS_SHORT), and its id. A function mostly calls the
// same callee again (loops, recursion). Calls are not counted here: the report counts the
// entries of the stream.
struct CalleeCache {
  uint64_t callee;
  uint32_t callee_id;
};

// One cache line. `cache` is the function's own CalleeCache (as a caller): the next entry hook
// finds it without indexing by id.
struct alignas(64) ShadowFrame {
  uint64_t function;
  uint64_t sp;           // the hook's frame address at entry: deeper frames have smaller ones
  uint64_t call_site;    // where the function was called from (its caller's return address)
  uint64_t hook_return;  // where the entry hook returns to: one place per inlined copy
  CalleeCache* cache;
  uint64_t tick;  // timed mode: the tick of its entry event (what a SIZE record names)
  uint32_t id;
};

// Counts mode: exact calls per (call site, entry hook return address), the edge as the entry
// hook sees it (docs/format.md, "Call-site counts"), so that counting needs no shadow stack and
// the exit hook nothing at all. Open addressing with linear probing, at most half full; the entry
// hook's fast path looks at the slot a key hashes to (its home) and the next one, and the slow
// path moves a key it finds further on into that next slot (no key is ever removed, so a key
// moved further on from there is still between its home and the first empty slot). Two keys
// with one home thus both take the fast path.
struct SiteSlot {
  uint64_t call_site;
  uint64_t hook_return;  // 0 = empty (a hook's return address never is)
  uint64_t calls;
  uint64_t callee_id;
};

struct SiteTable {
  uint64_t capacity;  // a power of two
  uint64_t used;
  SiteSlot slots[];
};

constexpr uint64_t kFirstSiteCapacity = 1024;

// The home slot of a key in a table of 2^(64 − shift) slots: one multiply, the top bits.
inline uint64_t SiteHome(uint64_t call_site, uint64_t hook_return, uint32_t shift) {
  return ((call_site ^ (hook_return << 16)) * 0x9E3779B97F4A7C15ull) >> shift;
}

// Mapped whole (the shadow stack is part of it, so a hook reaches its frames with no load).
struct TraceThread {
  pid_t tid;
  std::atomic<bool> alive;
  int in_hook;
  std::atomic<SiteTable*> sites;  // counts mode
  std::atomic<uint32_t> depth;
  CalleeCache* callee_cache;  // by caller function id (0: untraced caller)
  // Timed mode: where the next event goes in `buffer`, and the last place an event may start.
  // Null in counts mode or when out of buffers.
  uint8_t* pos;
  uint8_t* limit;
  uint64_t last_tick;
  EventBuffer* buffer;
  uint64_t cache_address[kCacheSize];
  uint32_t cache_id[kCacheSize];
  ShadowFrame frames[kShadowCapacity];
};

TraceThread* g_threads[kMaxThreads];
std::atomic<int> g_thread_count{0};
__thread TraceThread* t_trace __attribute__((tls_model("initial-exec"))) = nullptr;

// Counts mode: what the entry hook's fast path reads, on its own, so that it takes a single
// thread-local load: the slots of the thread's table and the shift that takes a hashed key to
// one. Until the thread has a table, and while its slow path runs, they name two empty slots
// (shift 63) where no key is ever found: every call goes to the slow path, which knows why.
SiteSlot g_no_sites[2];
struct SiteView {
  SiteSlot* slots;
  uint64_t shift;
};
constexpr SiteView kNoSiteView{g_no_sites, 63};
__thread SiteView t_sites __attribute__((tls_model("initial-exec"))) = kNoSiteView;

// Timed mode: `b` (null when out of buffers) receives the thread's next events.
void UseBuffer(TraceThread* tt, EventBuffer* b) {
  tt->buffer = b;
  tt->limit = b ? b->data + kEventBufferBytes - kMaxEventBytes : nullptr;
  __atomic_store_n(&tt->pos, b ? b->data : nullptr, __ATOMIC_RELEASE);
}

// The bytes of the thread's current buffer written so far.
uint32_t BufferedBytes(TraceThread* tt) {
  uint8_t* pos = __atomic_load_n(&tt->pos, __ATOMIC_ACQUIRE);
  return pos && tt->buffer ? uint32_t(pos - tt->buffer->data) : 0;
}

SiteTable* NewSiteTable(uint64_t capacity) {
  auto* t = static_cast<SiteTable*>(MapZeroed(sizeof(SiteTable) + capacity * sizeof(SiteSlot)));
  if (t) t->capacity = capacity;
  return t;
}

void UseSites(TraceThread* tt, SiteTable* t) { tt->sites.store(t, std::memory_order_release); }

// The view of the thread's table for the entry hook.
SiteView ViewOf(const SiteTable* t) {
  return SiteView{const_cast<SiteSlot*>(t->slots), uint64_t(64 - __builtin_ctzll(t->capacity))};
}

TraceThread* AttachThread() {
  int index = g_thread_count.fetch_add(1);
  if (index >= kMaxThreads) return nullptr;
  auto* tt = static_cast<TraceThread*>(MapZeroed(sizeof(TraceThread)));
  if (!tt) return nullptr;
  if (g_timed_hooks) {
    tt->callee_cache =
        static_cast<CalleeCache*>(MapZeroed(sizeof(CalleeCache) * kFunctionCapacity));
    if (!tt->callee_cache) return nullptr;
  } else {
    SiteTable* sites = NewSiteTable(kFirstSiteCapacity);
    if (!sites) return nullptr;
    UseSites(tt, sites);
  }
  tt->tid = GetTid();
  if (g_timed_hooks) {
    tt->last_tick = __builtin_ia32_rdtsc();
    UseBuffer(tt, TakeBuffer(uint64_t(tt->tid), tt->last_tick));
  }
  tt->alive.store(true);
  g_threads[index] = tt;
  t_trace = tt;
  return tt;
}

uint32_t FunctionIdOf(TraceThread* tt, uint64_t address) {
  int slot = int((address >> 4) & (kCacheSize - 1));
  if (tt->cache_address[slot] == address) return tt->cache_id[slot];
  uint32_t id = GlobalFunctionId(address);
  tt->cache_address[slot] = address;
  tt->cache_id[slot] = id;
  return id;
}

// Counts mode: a table twice as large with the same keys. The old one stays mapped: a reader at
// exit may still hold it.
bool GrowSites(TraceThread* tt) {
  SiteTable* old = tt->sites.load(std::memory_order_relaxed);
  SiteTable* grown = NewSiteTable(old->capacity * 2);
  if (!grown) return false;
  uint64_t mask = grown->capacity - 1;
  uint32_t shift = uint32_t(64 - __builtin_ctzll(grown->capacity));
  for (uint64_t i = 0; i < old->capacity; ++i) {
    const SiteSlot& s = old->slots[i];
    if (!s.hook_return) continue;
    uint64_t j = SiteHome(s.call_site, s.hook_return, shift);
    while (grown->slots[j].hook_return) j = (j + 1) & mask;
    grown->slots[j] = s;
  }
  grown->used = old->used;
  UseSites(tt, grown);
  return true;
}

// Counts mode, with in_hook set: counts one call of `function` entered from `call_site` (its
// entry hook returning to `hook_return`), creating the slot, and leaves the key in one of the
// two slots the entry hook's fast path looks at.
void CountCallSite(TraceThread* tt, uint64_t function, uint64_t call_site, uint64_t hook_return) {
  SiteTable* t = tt->sites.load(std::memory_order_relaxed);
  uint64_t mask = t->capacity - 1;
  uint64_t home = SiteHome(call_site, hook_return, uint32_t(ViewOf(t).shift));
  uint64_t i = home;
  while (t->slots[i].hook_return &&
         !(t->slots[i].call_site == call_site && t->slots[i].hook_return == hook_return))
    i = (i + 1) & mask;
  if (!t->slots[i].hook_return) {
    if ((t->used + 1) * 2 > t->capacity) {
      if (GrowSites(tt)) CountCallSite(tt, function, call_site, hook_return);
      return;  // no memory for a larger table: the call is not counted
    }
    t->slots[i] = SiteSlot{call_site, hook_return, 0, FunctionIdOf(tt, function)};
    ++t->used;
  }
  ++t->slots[i].calls;
  uint64_t second = (home + 1) & mask;
  if (i != home && i != second) std::swap(t->slots[i], t->slots[second]);
}

// The buffer is full: hand it to the writer and take the next. Returns where the event goes (null
// when out of buffers).
__attribute__((noinline)) uint8_t* NextBuffer(TraceThread* tt) {
  tt->buffer->size = BufferedBytes(tt);
  HandOver(tt->buffer);
  UseBuffer(tt, TakeBuffer(uint64_t(tt->tid), tt->last_tick));
  if (!tt->buffer) {
    // Out of buffers: this thread's stream stops here (counted); counts mode goes on.
    g_events_dropped.fetch_add(1);
  }
  return tt->pos;
}

// A varint, with the common short ones (below 2^14) in one two-byte store and no loop. May write
// one byte past the varint.
__attribute__((always_inline)) inline uint8_t* PutVarint(uint8_t* p, uint64_t value) {
  if (__builtin_expect(value < 0x4000, 1)) {
    uint64_t two = value >= 0x80;
    uint16_t bytes = uint16_t((value & 0x7F) | two << 7 | (value >> 7) << 8);
    std::memcpy(p, &bytes, 2);
    return p + 1 + two;
  }
  return p + EncodeVarint(value, p);
}

// An event of more than one byte has been written from `start` to `end`.
__attribute__((always_inline)) inline void AddTail(TraceThread* tt, const uint8_t* start,
                                                   const uint8_t* end) {
  std::atomic<uint32_t>& tail = tt->buffer->tail_bytes;
  tail.store(tail.load(std::memory_order_relaxed) + uint32_t(end - start - 1),
             std::memory_order_release);
}

// Timed mode's events, stamped `tick`, in TRACE_EVENTS_SHORT's code (docs/format.md). The hot
// path: an exit, or an entry of the function the caller entered last (kind 1: the callee cache
// hit, which says so), one byte when within 63 ticks of the previous event. Written at `p`, the
// write position, with room for it: no call, so that the hooks' fast paths save no registers.
__attribute__((always_inline)) inline void WriteShort(TraceThread* tt, uint8_t* p, uint8_t kind,
                                                      uint64_t tick) {
  uint64_t delta = tick - tt->last_tick;
  tt->last_tick = tick;
  if (__builtin_expect(delta <= format::kShortMaxTicks, 1)) {
    *p = uint8_t(kind * format::kShortRepeatEntry + delta);
    __atomic_store_n(&tt->pos, p + 1, __ATOMIC_RELEASE);
    return;
  }
  *p = uint8_t(format::kShortLong + kind);
  uint8_t* end = PutVarint(p + 1, delta);
  __atomic_store_n(&tt->pos, end, __ATOMIC_RELEASE);
  AddTail(tt, p, end);
}

constexpr uint8_t kExit = 0, kRepeatedEntry = 1;

// An exit, from the slow paths.
void Exit(TraceThread* tt) {
  uint64_t tick = __builtin_ia32_rdtsc();
  uint8_t* p = tt->pos;
  if (p > tt->limit && !(p = NextBuffer(tt))) return;
  WriteShort(tt, p, kExit, tick);
}

// An entry with its function id (the slow paths: any entry may be written so).
void AppendEntry(TraceThread* tt, uint32_t id, uint64_t tick) {
  uint8_t* p = tt->pos;
  if (p > tt->limit && !(p = NextBuffer(tt))) return;
  *p = uint8_t(format::kShortLong + 2);
  uint8_t* end = PutVarint(PutVarint(p + 1, tick - tt->last_tick), id);
  tt->last_tick = tick;
  __atomic_store_n(&tt->pos, end, __ATOMIC_RELEASE);
  AddTail(tt, p, end);
}

bool Timed() { return g_mode.load(std::memory_order_relaxed) == int(format::TraceMode::kTimed); }

// Frames left without an exit (longjmp out of them, a thread cancelled) are closed so the stream
// stays balanced. A frame is dead when its hook ran deeper on the stack than the current one. At
// the same depth it is alive only as the parent of inlined code: GCC gives inlined code the
// enclosing function's call site, and its entry hook returns to another place than the
// parent's. A frame with the same hook return address is an earlier activation of the same code.
bool DeadFrame(const ShadowFrame& f, uint64_t sp, uint64_t call_site, uint64_t hook_return) {
  if (f.sp != sp) return f.sp < sp;
  return f.call_site != call_site || f.hook_return == hook_return;
}

// Where the stack pointer of a function's caller was at the call (the function's CFA): just
// above the function's return address, `call_site`, found by looking up the stack from `sp` (the
// entry hook's CFA, below the function's prologue). 0 when it is not within kReturnAddressScan
// words. The look stops at the return address, so it reads only the function's own frame.
constexpr int kReturnAddressScan = 512;

uint64_t CallerStackPointer(uint64_t sp, uint64_t call_site) {
  const auto* word = reinterpret_cast<const uint64_t*>(sp);
  for (int i = 0; i < kReturnAddressScan; ++i)
    if (word[i] == call_site) return uint64_t(&word[i + 1]);
  return 0;
}

__attribute__((noinline)) uint32_t PopDeadFrames(TraceThread* tt, uint32_t d, uint64_t sp,
                                                 uint64_t call_site, uint64_t hook_return) {
  while (d > 0 && DeadFrame(tt->frames[d - 1], sp, call_site, hook_return)) {
    --d;
    if (tt->pos) Exit(tt);
  }
  // A frame higher on the stack than this entry's hook may still be a sibling of the new call
  // rather than its parent, abandoned by a longjmp back to their common caller (when its frame
  // is smaller than the new one's): a parent's hook ran at or above the stack pointer the new
  // function was called with, a sibling's below it.
  if (d > 0 && tt->frames[d - 1].sp > sp) {
    uint64_t caller_sp = CallerStackPointer(sp, call_site);
    while (d > 0 && tt->frames[d - 1].sp < caller_sp) {
      --d;
      if (tt->pos) Exit(tt);
    }
  }
  return d;
}

// `tail_bytes` read before `size` (see EventBuffer).
void WriteEvents(format::Writer& writer, const EventBuffer* b, uint32_t tail_bytes, uint32_t size) {
  if (size == 0) return;
  uint64_t events = size > tail_bytes ? size - tail_bytes : 0;
  writer.add(format::TraceEventsRecord{b->tid, b->base_tick, events, b->data, size,
                                       /*short_code=*/true});
}

// The thread's current buffer, which it may still be writing (the thread ends, or the process).
void WriteOpenEvents(format::Writer& writer, TraceThread* tt) {
  if (!tt->buffer) return;
  uint32_t tail_bytes = tt->buffer->tail_bytes.load(std::memory_order_acquire);
  WriteEvents(writer, tt->buffer, tail_bytes, BufferedBytes(tt));
}

// Counts mode: the thread's call sites with their calls (a snapshot when another thread reads
// them while it runs, at exit).
void WriteSiteCounts(format::Writer& writer, TraceThread* tt, uint64_t now) {
  SiteTable* t = tt->sites.load(std::memory_order_acquire);
  if (!t) return;
  uint64_t capacity = t->capacity;
  size_t quads_bytes = sizeof(uint64_t) * 4 * capacity;
  auto* quads = static_cast<uint64_t*>(MapZeroed(quads_bytes));
  if (!quads) return;
  uint64_t n = 0;
  for (uint64_t i = 0; i < capacity; ++i) {
    const SiteSlot& s = t->slots[i];
    if (!s.hook_return || !s.calls) continue;
    uint64_t* q = quads + 4 * n++;
    q[0] = s.call_site;
    q[1] = s.hook_return;
    q[2] = s.callee_id;
    q[3] = s.calls;
  }
  writer.add(format::CallSiteCountsRecord{now, uint64_t(tt->tid), n, quads});
  munmap(quads, quads_bytes);
}

// The calls of the thread: counts mode's call sites (timed mode's calls are its entry events).
void WriteCounts(format::Writer& writer, TraceThread* tt, uint64_t now) {
  if (!g_timed_hooks) WriteSiteCounts(writer, tt, now);
}

}  // namespace

void InitTrace(format::TraceMode mode) {
  if (mode == format::TraceMode::kNone) return;
  g_function_slots =
      static_cast<FunctionSlot*>(MapZeroed(sizeof(FunctionSlot) * kFunctionCapacity));
  g_function_address =
      static_cast<std::atomic<uint64_t>*>(MapZeroed(sizeof(uint64_t) * kFunctionCapacity));
  if (!g_function_slots || !g_function_address) return;
  if (mode == format::TraceMode::kTimed) {
    // rdtsc ticks against the monotonic clock over 5 ms: good to about 1e-4.
    uint64_t t0 = NowNs(), c0 = __builtin_ia32_rdtsc(), t1;
    while ((t1 = NowNs()) - t0 < 5'000'000) {
    }
    uint64_t c1 = __builtin_ia32_rdtsc();
    g_tick_ns_q32 = c1 > c0 ? ((t1 - t0) << 32) / (c1 - c0) : 0;
  }
  g_timed_hooks = mode == format::TraceMode::kTimed;
  g_mode.store(int(mode));
}

format::TraceMode CurrentTraceMode() {
  return format::TraceMode(g_mode.load(std::memory_order_relaxed));
}

bool TraceHooksSeen() { return g_function_next.load(std::memory_order_relaxed) > 1; }

uint64_t TraceTickNsQ32() { return g_tick_ns_q32; }

uint32_t ShadowStack(uint64_t pc, uint64_t* frames, uint32_t max, uint32_t* flags) {
  TraceThread* tt = t_trace;
  if (!tt || max < 2) return 0;
  uint32_t depth = tt->depth.load(std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_acquire);
  if (depth == 0) return 0;
  uint32_t n = 0;
  frames[n++] = pc;
  for (uint32_t i = depth; i-- > 0;) {
    if (n == max) {
      *flags |= format::kSampleTruncated;
      break;
    }
    frames[n++] = tt->frames[i].function;
  }
  *flags |= format::kSampleShadowStack;
  return n;
}

void DrainTraceLocked(format::Writer& writer, bool everything) {
  if (g_mode.load() == 0) return;
  uint32_t next = g_function_next.load();
  while (g_function_emitted + 1 < next && g_function_emitted + 1 < kFunctionCapacity) {
    uint64_t address = g_function_address[g_function_emitted + 1].load(std::memory_order_acquire);
    if (!address) break;  // being inserted: next time
    ++g_function_emitted;
    writer.add(format::TraceFunctionRecord{g_function_emitted, address});
  }
  if (!Timed()) return;
  pthread_mutex_lock(&g_buffers_lock);
  EventBuffer* full = g_full_head;
  g_full_head = nullptr;
  pthread_mutex_unlock(&g_buffers_lock);
  // Oldest first, so each thread's buffers are written in order.
  EventBuffer* ordered = nullptr;
  while (full) {
    EventBuffer* next_full = full->next;
    full->next = ordered;
    ordered = full;
    full = next_full;
  }
  while (ordered) {
    EventBuffer* b = ordered;
    ordered = b->next;
    WriteEvents(writer, b, b->tail_bytes.load(), b->size);
    pthread_mutex_lock(&g_buffers_lock);
    b->next = g_free;
    g_free = b;
    pthread_mutex_unlock(&g_buffers_lock);
  }
  (void)everything;
}

void EndThreadTrace() {
  TraceThread* tt = t_trace;
  if (!tt || !Running()) return;
  tt->in_hook = 1;  // hooks from here on (TLS destructors) are not this thread's calls any more
  t_sites = kNoSiteView;
  LockSession();
  DrainTraceLocked(*g_session.writer, false);
  if (Timed()) WriteOpenEvents(*g_session.writer, tt);
  WriteCounts(*g_session.writer, tt, NowNs());
  tt->alive.store(false);
  UnlockSession();
}

void FinishTraceLocked(format::Writer& writer, uint64_t now) {
  if (g_mode.load() == 0) return;
  DrainTraceLocked(writer, true);
  int count = g_thread_count.load();
  for (int i = 0; i < count && i < kMaxThreads; ++i) {
    TraceThread* tt = g_threads[i];
    if (!tt || !tt->alive.load()) continue;
    if (Timed()) WriteOpenEvents(writer, tt);
    WriteCounts(writer, tt, now);
  }
  // Functions first seen while the last buffers were written.
  DrainTraceLocked(writer, true);
  writer.add(format::StatsRecord{now, writer.internString("trace_unmatched_exits"),
                                 g_unmatched_exits.load()});
  writer.add(format::StatsRecord{now, writer.internString("trace_events_dropped"),
                                 g_events_dropped.load()});
  if (g_inherited_frames)
    writer.add(format::StatsRecord{now, writer.internString("trace_inherited_frames"),
                                   g_inherited_frames});
}

bool CurrentTimedCall(uint64_t* function, uint64_t* entry_tick) {
  TraceThread* tt = t_trace;
  uint32_t d = tt ? tt->depth.load(std::memory_order_relaxed) : 0;
  if (!Timed() || d == 0 || !tt->pos || d > kShadowCapacity) {
    g_sizes_without_call.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  *function = tt->frames[d - 1].id;
  *entry_tick = tt->frames[d - 1].tick;
  return true;
}

uint64_t SizesWithoutCall() { return g_sizes_without_call.load(std::memory_order_relaxed); }

void ResetTraceAfterFork() {
  if (g_mode.load() == 0) return;
  TraceThread* mine = t_trace;
  int count = g_thread_count.load();
  for (int i = 0; i < count && i < kMaxThreads; ++i)
    if (g_threads[i] && g_threads[i] != mine) g_threads[i]->alive.store(false);
  g_full_head = nullptr;  // the parent writes those
  pthread_mutex_init(&g_buffers_lock, nullptr);
  g_unmatched_exits.store(0);
  g_events_dropped.store(0);
  if (!mine) return;
  mine->tid = GetTid();
  if (!g_timed_hooks) {
    SiteTable* sites = mine->sites.load();
    for (uint64_t i = 0; i < sites->capacity; ++i) sites->slots[i].calls = 0;
    return;
  }
  uint32_t functions = std::min<uint32_t>(g_function_next.load(), kFunctionCapacity);
  // The child's stream starts afresh: its first entry from each caller names its callee.
  std::memset(mine->callee_cache, 0, sizeof(CalleeCache) * functions);
  uint32_t depth = mine->depth.load();
  g_inherited_frames = depth;
  if (Timed()) {
    // The child's stream starts with the frames it inherited, entered now.
    mine->last_tick = __builtin_ia32_rdtsc();
    UseBuffer(mine, TakeBuffer(uint64_t(mine->tid), mine->last_tick));
    for (uint32_t i = 0; i < depth; ++i) {
      AppendEntry(mine, mine->frames[i].id, __builtin_ia32_rdtsc());
      mine->frames[i].tick = mine->last_tick;
    }
  }
}

}  // namespace hotline::rt

using namespace hotline::rt;

namespace {

// Everything but the common case: a new thread, a frame to close, a callee not in the cache,
// a full shadow stack.
__attribute__((noinline)) void EnterSlow(void* function, void* call_site, uint64_t sp,
                                         uint64_t hook_return) {
  TraceThread* tt = t_trace;
  if (__builtin_expect(!tt, 0)) {
    if (g_mode.load(std::memory_order_relaxed) == 0 || !(tt = AttachThread())) return;
  }
  if (tt->in_hook) return;  // a traced signal handler interrupting a hook
  tt->in_hook = 1;
  uint32_t d = tt->depth.load(std::memory_order_relaxed);
  if (d > 0) d = PopDeadFrames(tt, d, sp, uint64_t(call_site), hook_return);
  uint32_t caller = d ? tt->frames[d - 1].id : 0;
  uint32_t id;
  if (tt->callee_cache[caller].callee == uint64_t(function)) {
    id = tt->callee_cache[caller].callee_id;
  } else {
    id = FunctionIdOf(tt, uint64_t(function));
    // The cache names the callee this caller last entered in the event stream (what the fast
    // path's one-byte entry says): a call past the end of the shadow stack is not in the stream.
    if (d < kShadowCapacity) tt->callee_cache[caller] = CalleeCache{uint64_t(function), id};
  }
  if (__builtin_expect(d < kShadowCapacity, 1)) {
    uint64_t tick = 0;
    if (tt->pos) {
      tick = __builtin_ia32_rdtsc();
      AppendEntry(tt, id, tick);
    }
    tt->frames[d] = ShadowFrame{
        uint64_t(function), sp, uint64_t(call_site), hook_return, &tt->callee_cache[id], tick, id};
    std::atomic_signal_fence(std::memory_order_release);
    ++d;
  }
  tt->depth.store(d, std::memory_order_relaxed);
  tt->in_hook = 0;
}

// Timed mode's entry. The common case stays small (few registers, no calls, a short chain of
// loads): a known thread, a caller whose last callee is this function; its event is a clock
// read and mostly a one-byte store. in_hook keeps a traced signal handler that interrupts the
// append from appending at the same place (it records nothing meanwhile, as in the slow paths).
// Not inlined into the hook, whose counts path then saves no registers.
__attribute__((noinline)) void TimedEnter(void* function, void* call_site, uint64_t sp,
                                          uint64_t hook_return) {
  TraceThread* tt = t_trace;
  if (__builtin_expect(tt != nullptr && !tt->in_hook, 1)) {
    uint32_t d = tt->depth.load(std::memory_order_relaxed);
    if (d > 0 && d < kShadowCapacity) {
      const ShadowFrame& caller = tt->frames[d - 1];
      CalleeCache& cache = *caller.cache;
      bool alive = caller.sp > sp || (caller.sp == sp && caller.call_site == uint64_t(call_site) &&
                                      caller.hook_return != hook_return);
      if (alive && cache.callee == uint64_t(function)) {
        uint8_t* p = nullptr;
        if (tt->pos) {
          tt->in_hook = 1;
          std::atomic_signal_fence(std::memory_order_seq_cst);
          p = tt->pos;
          if (__builtin_expect(p > tt->limit, 0)) {
            std::atomic_signal_fence(std::memory_order_seq_cst);
            tt->in_hook = 0;
            return EnterSlow(function, call_site, sp, hook_return);  // the next buffer
          }
        }
        // The frame first: fewer values live across the clock read.
        uint32_t id = cache.callee_id;
        ShadowFrame& frame = tt->frames[d];
        frame = ShadowFrame{
            uint64_t(function), sp, uint64_t(call_site), hook_return, &tt->callee_cache[id], 0, id};
        if (p) {
          uint64_t tick = __builtin_ia32_rdtsc();
          WriteShort(tt, p, kRepeatedEntry, tick);
          frame.tick = tick;  // what a SIZE record names
          std::atomic_signal_fence(std::memory_order_seq_cst);
          tt->in_hook = 0;
        }
        std::atomic_signal_fence(std::memory_order_release);
        tt->depth.store(d + 1, std::memory_order_relaxed);
        return;
      }
    }
  }
  EnterSlow(function, call_site, sp, hook_return);
}

// Counts mode's slow path: a new thread, a call site not in its home slot or not seen yet.
__attribute__((noinline)) void CountSlow(void* function, void* call_site, uint64_t hook_return) {
  TraceThread* tt = t_trace;
  if (__builtin_expect(!tt, 0)) {
    if (g_mode.load(std::memory_order_relaxed) == 0 || !(tt = AttachThread())) return;
  }
  if (tt->in_hook) return;  // a traced signal handler interrupting the slow path
  tt->in_hook = 1;
  t_sites = kNoSiteView;  // and one interrupting it here misses too
  std::atomic_signal_fence(std::memory_order_seq_cst);
  CountCallSite(tt, uint64_t(function), uint64_t(call_site), hook_return);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_sites = ViewOf(tt->sites.load(std::memory_order_relaxed));
  std::atomic_signal_fence(std::memory_order_seq_cst);
  tt->in_hook = 0;
}

}  // namespace

// Counts mode keeps no stack: the entry hook adds one to the counter of its call site, which
// is in its home slot or the next but for the first call (one multiply, two compares, one add);
// the exit hook returns at once. A traced signal handler interrupting the fast path counts its
// calls too (each update is one instruction); one interrupting the slow path is not counted
// (in_hook).
// Timed mode tests the flag once and goes its own way. The stack address both hooks compare
// (timed mode) is the caller's stack pointer at the hook's call, which takes no frame here.
HOTLINE_HOOK void __cyg_profile_func_enter(void* function, void* call_site) {
  uint64_t hook_return = uint64_t(__builtin_return_address(0));
  if (!g_timed_hooks) {
    SiteView view = t_sites;
    uint64_t home = SiteHome(uint64_t(call_site), hook_return, uint32_t(view.shift));
    SiteSlot* slot = &view.slots[home];
    if (__builtin_expect(slot->call_site == uint64_t(call_site) && slot->hook_return == hook_return,
                         1)) {
      ++slot->calls;
      return;
    }
    slot = &view.slots[(home + 1) & (~uint64_t{0} >> view.shift)];
    if (slot->call_site == uint64_t(call_site) && slot->hook_return == hook_return) {
      ++slot->calls;
      return;
    }
    return CountSlow(function, call_site, hook_return);
  }
  TimedEnter(function, call_site, uint64_t(__builtin_dwarf_cfa()), hook_return);  // a jump
}

namespace {

__attribute__((noinline)) void ExitSlow(void* function, uint64_t sp) {
  TraceThread* tt = t_trace;
  if (!tt || tt->in_hook) return;
  tt->in_hook = 1;
  uint32_t d = tt->depth.load(std::memory_order_relaxed);
  if (d == 0 || tt->frames[d - 1].function != uint64_t(function)) {
    // Frames strictly deeper than this exit's are dead (at the same depth is the one exiting).
    while (d > 0 && tt->frames[d - 1].sp < sp) {
      --d;
      if (tt->pos) Exit(tt);
    }
  }
  if (d > 0 && tt->frames[d - 1].function == uint64_t(function)) {
    --d;
    if (tt->pos) Exit(tt);
  } else {
    g_unmatched_exits.fetch_add(1, std::memory_order_relaxed);
  }
  tt->depth.store(d, std::memory_order_relaxed);
  tt->in_hook = 0;
}

}  // namespace

HOTLINE_HOOK void __cyg_profile_func_exit(void* function, void* call_site) {
  (void)call_site;
  if (!g_timed_hooks) return;  // counts mode
  TraceThread* tt = t_trace;
  if (__builtin_expect(tt != nullptr && !tt->in_hook, 1)) {
    uint32_t d = tt->depth.load(std::memory_order_relaxed);
    if (d > 0 && d <= kShadowCapacity && tt->frames[d - 1].function == uint64_t(function)) {
      if (tt->pos) {
        tt->in_hook = 1;
        std::atomic_signal_fence(std::memory_order_seq_cst);
        uint8_t* p = tt->pos;
        if (__builtin_expect(p > tt->limit, 0)) {
          std::atomic_signal_fence(std::memory_order_seq_cst);
          tt->in_hook = 0;
          return ExitSlow(function, uint64_t(__builtin_dwarf_cfa()));  // the next buffer
        }
        WriteShort(tt, p, kExit, __builtin_ia32_rdtsc());
        std::atomic_signal_fence(std::memory_order_seq_cst);
        tt->in_hook = 0;
      }
      tt->depth.store(d - 1, std::memory_order_relaxed);
      return;
    }
  }
  ExitSlow(function, uint64_t(__builtin_dwarf_cfa()));
}

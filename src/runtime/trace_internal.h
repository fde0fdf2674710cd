// What the function tracer's files share (trace.h is its face to the rest of the runtime): the
// per-thread state, timed mode's event buffers and counts mode's call-site table. Every object
// here is defined once, in the file named beside it. What the hooks' fast paths use is inline
// here: without link-time optimisation, a call into another file would cost every traced call.
#pragma once

#include <sys/mman.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "base/varint.h"
#include "format/schema.h"
#include "format/writer.h"

// Hidden, as the runtime's definitions are: the compiler then reaches these objects directly, as
// it did when each was local to one file, rather than through the GOT.
#pragma GCC visibility push(hidden)

namespace hotline::rt {

// ---- Process-wide state (trace.cc). ----

inline constexpr uint32_t kFunctionCapacity = 1u << 20;

extern std::atomic<int> g_mode;
// Which path the hooks take, set once by InitTrace before the program's threads exist (so read
// without ordering): timed mode's shadow stack and events, or counts mode's call-site table.
extern bool g_timed_hooks;
extern std::atomic<uint64_t> g_events_dropped;
extern std::atomic<uint64_t> g_unmatched_exits;

inline void* MapZeroed(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// The small id of the function entered at `address`, in the process-wide function table
// (trace.cc); 0 when the table is full.
uint32_t GlobalFunctionId(uint64_t address);

// Timed mode: the bytes of code from the entry of function `id` to the end of its unwind entry
// (its .eh_frame FDE), found once; UINT32_MAX when unknown (any call then counts as its own).
uint32_t FunctionExtent(uint32_t id);
extern std::atomic<uint32_t>* g_function_extent;  // by id: 0 until FunctionExtent found it

// ---- Timed mode: event buffers (trace_events.cc). ----

inline constexpr size_t kEventBufferBytes = 256 * 1024;
// Three varints (an entry from untraced code), and the byte past them that the two-byte store of
// a short varint may write.
inline constexpr size_t kMaxEventBytes = 3 * 10 + 1;

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

EventBuffer* TakeBuffer(uint64_t tid, uint64_t tick);

// ---- Per-thread state. ----

inline constexpr uint32_t kShadowCapacity = 1u << 16;
inline constexpr int kCacheSize = 256;

// Timed mode, per caller function: the callee it entered last in the event stream, which the
// one-byte repeated entry names (TRACE_EVENTS_SHORT), and its id. A function mostly calls the
// same callee again (loops, recursion). Calls are not counted here: the report counts the
// entries of the stream.
struct CalleeCache {
  uint64_t callee;
  uint32_t callee_id;
  // The code range of that call's frame (ShadowFrame::code, extent), which the next entry of the
  // callee takes. A call inlined elsewhere than the last may find the wrong one: then a call from
  // its code is not in the range and takes the slow path, which finds the frame's range anew.
  uint32_t extent;
  uint64_t code;
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
  // The code its calls come from, [code, code + extent): its function's, or for a copy inlined
  // into its caller (same call site), the caller's. A call from elsewhere came through untraced
  // code (qsort calling a comparator, a signal's trampoline, makecontext's start).
  uint32_t extent;
  uint64_t code;
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

// The home slot of a key in a table of 2^(64 − shift) slots: one multiply, the top bits.
inline uint64_t SiteHome(uint64_t call_site, uint64_t hook_return, uint32_t shift) {
  return ((call_site ^ (hook_return << 16)) * 0x9E3779B97F4A7C15ull) >> shift;
}

// Mapped whole (the shadow stack is part of it, so a hook reaches its frames with no load).
struct TraceThread {
  pid_t tid;
  std::atomic<bool> alive;
  // Counts mode: the thread has passed its exit hook. It goes on counting (glibc's frees at a
  // thread's exit are its calls) and its counts are written once the thread is gone.
  std::atomic<bool> exiting;
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

extern __thread TraceThread* t_trace __attribute__((tls_model("initial-exec")));

// Counts mode: what the entry hook's fast path reads, on its own, so that it takes a single
// thread-local load: the slots of the thread's table and the shift that takes a hashed key to
// one. Until the thread has a table, and while its slow path runs, they name two empty slots
// (shift 63) where no key is ever found: every call goes to the slow path, which knows why.
// Defined in trace_call_sites.cc.
extern SiteSlot g_no_sites[2];
struct SiteView {
  SiteSlot* slots;
  uint64_t shift;
};
inline constexpr SiteView kNoSiteView{g_no_sites, 63};
extern __thread SiteView t_sites __attribute__((tls_model("initial-exec")));

// Timed mode: `b` (null when out of buffers) receives the thread's next events.
inline void UseBuffer(TraceThread* tt, EventBuffer* b) {
  tt->buffer = b;
  tt->limit = b ? b->data + kEventBufferBytes - kMaxEventBytes : nullptr;
  __atomic_store_n(&tt->pos, b ? b->data : nullptr, __ATOMIC_RELEASE);
}

// The bytes of the thread's current buffer written so far.
inline uint32_t BufferedBytes(TraceThread* tt) {
  uint8_t* pos = __atomic_load_n(&tt->pos, __ATOMIC_ACQUIRE);
  return pos && tt->buffer ? uint32_t(pos - tt->buffer->data) : 0;
}

inline uint32_t FunctionIdOf(TraceThread* tt, uint64_t address) {
  int slot = int((address >> 4) & (kCacheSize - 1));
  if (tt->cache_address[slot] == address) return tt->cache_id[slot];
  uint32_t id = GlobalFunctionId(address);
  tt->cache_address[slot] = address;
  tt->cache_id[slot] = id;
  return id;
}

// The calling thread's state, made on its first traced call (trace.cc); null when out of memory
// or of thread slots.
TraceThread* AttachThread();

// ---- Counts mode: the call-site table (trace_call_sites.cc). ----

inline constexpr uint64_t kFirstSiteCapacity = 1024;

SiteTable* NewSiteTable(uint64_t capacity);

inline void UseSites(TraceThread* tt, SiteTable* t) {
  tt->sites.store(t, std::memory_order_release);
}

// Counts mode's slow path: a new thread, a call site not in its home slot or not seen yet.
void CountSlow(void* function, void* call_site, uint64_t hook_return);

// Counts mode: the thread's call sites with their calls since the last such record (records
// add up), which are zeroed (a snapshot when another thread reads them while it runs, at exit or
// before exec). With `range` ([range[0], range[1]), a module that is being unloaded), only the
// sites that name an address in it.
void WriteSiteCounts(format::Writer& writer, TraceThread* tt, uint64_t now,
                     const uint64_t* range = nullptr);
// The entry address of a function id (0 when unknown).
uint64_t FunctionAddress(uint32_t id);

// ---- Timed mode: the event stream (trace_events.cc). ----

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

inline constexpr uint8_t kExit = 0, kRepeatedEntry = 1;

// An exit, from the slow paths.
void AppendExit(TraceThread* tt);
// An entry with its function id (the slow paths: any entry may be written so), and with the call
// site when the call came from untraced code (`call_site` not 0).
void AppendEntry(TraceThread* tt, uint32_t id, uint64_t tick, uint64_t call_site = 0);

// Writer side, with the session lock held: the thread's current buffer, which it may still be
// writing (the thread ends, or the process).
void WriteOpenEvents(format::Writer& writer, TraceThread* tt);
// Writer side, with the session lock held: the buffers handed over, which become free again.
void WriteFullBuffers(format::Writer& writer);
// In the child after fork: the full buffers are the parent's to write, and their lock may have
// been held by a thread that does not exist here.
void ResetBuffersAfterFork();

}  // namespace hotline::rt

#pragma GCC visibility pop

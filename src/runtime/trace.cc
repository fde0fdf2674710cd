// The function tracer (trace.h): its mode, the process-wide function table, each thread's state
// and the writer side. The hooks are in trace_hooks.cc, timed mode's event stream in
// trace_events.cc and counts mode's call-site table in trace_call_sites.cc.
#include "runtime/trace.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "runtime/session.h"
#include "runtime/threads.h"
#include "runtime/trace_internal.h"
#include "runtime/unwind.h"

namespace hotline::rt {

std::atomic<int> g_mode{0};
bool g_timed_hooks = false;
std::atomic<uint64_t> g_events_dropped{0};
std::atomic<uint64_t> g_unmatched_exits{0};
__thread TraceThread* t_trace __attribute__((tls_model("initial-exec"))) = nullptr;
std::atomic<uint32_t>* g_function_extent = nullptr;

namespace {

// ---- The process-wide function table: entry address → small id, lock-free. ----

struct FunctionSlot {
  std::atomic<uint64_t> address;
  std::atomic<uint32_t> id;
};
FunctionSlot* g_function_slots = nullptr;
std::atomic<uint64_t>* g_function_address = nullptr;  // by id
uint64_t* g_function_seen = nullptr;  // by id: when the id was given (monotonic clock)
// A global slot whose function's module was unloaded: its address with this bit, so that a
// function loaded there later is given an id of its own.
constexpr uint64_t kRetired = uint64_t{1} << 63;
std::atomic<uint32_t> g_function_next{1};
uint32_t g_function_emitted = 0;  // writer side: ids below this have a TRACE_FUNCTION record

uint64_t g_tick_ns_q32 = 0;
std::atomic<uint64_t> g_sizes_without_call{0};
// Timed mode, in a forked child: how many frames its stream re-enters first (STATS
// `trace_inherited_frames`): not calls of the child's.
uint64_t g_inherited_frames = 0;

inline uint64_t Mix(uint64_t x) {
  x ^= x >> 31;
  x *= 0x9E3779B97F4A7C15ull;
  return x ^ (x >> 29);
}

}  // namespace

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
        g_function_seen[id] = NowNs();  // published with the address
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

uint32_t FunctionExtent(uint32_t id) {
  if (id == 0 || !g_function_extent) return UINT32_MAX;
  uint32_t extent = g_function_extent[id].load(std::memory_order_relaxed);
  if (extent != 0) return extent;
  uint64_t address = g_function_address[id].load(std::memory_order_acquire);
  uint64_t end = address ? UnwindEntryEnd(address) : 0;
  extent = end > address && end - address < UINT32_MAX ? uint32_t(end - address) : UINT32_MAX;
  g_function_extent[id].store(extent, std::memory_order_relaxed);
  return extent;
}

namespace {

TraceThread* g_threads[kMaxThreads];
std::atomic<int> g_thread_count{0};

// Timed mode, the module at [start, end) unloaded: its functions' ids are not given again, to a
// function loaded there later (dlclose, then dlopen of another library), and no thread's caches
// give them. A cleared callee cache entry costs its caller one entry event in the long code,
// which the reader takes as it comes. Only a thread running the unloaded code (a program's
// error) could meet an entry being cleared.
void RetireFunctionsIn(uint64_t start, uint64_t end) {
  auto inside = [&](uint64_t address) { return address >= start && address < end; };
  uint32_t functions = std::min<uint32_t>(g_function_next.load(), kFunctionCapacity);
  const uint32_t mask = kFunctionCapacity - 1;
  for (uint32_t id = 1; id < functions; ++id) {
    uint64_t address = g_function_address[id].load(std::memory_order_acquire);
    if (!address || !inside(address)) continue;
    for (uint32_t i = uint32_t(Mix(address)) & mask, probes = 0; probes < kFunctionCapacity;
         i = (i + 1) & mask, ++probes) {
      uint64_t seen = g_function_slots[i].address.load(std::memory_order_acquire);
      if (seen == 0) break;
      if (seen == address && g_function_slots[i].id.load(std::memory_order_acquire) == id) {
        g_function_slots[i].address.store(address | kRetired, std::memory_order_release);
        break;
      }
    }
  }
  int count = g_thread_count.load();
  for (int t = 0; t < count && t < kMaxThreads; ++t) {
    TraceThread* tt = g_threads[t];
    if (!tt || !tt->alive.load()) continue;
    for (uint32_t caller = 0; caller < functions; ++caller)
      if (inside(tt->callee_cache[caller].callee)) tt->callee_cache[caller].callee = 0;
    for (int slot = 0; slot < kCacheSize; ++slot)
      if (inside(tt->cache_address[slot])) tt->cache_address[slot] = 0;
  }
}

}  // namespace

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

namespace {

bool Timed() { return g_mode.load(std::memory_order_relaxed) == int(format::TraceMode::kTimed); }

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
  g_function_seen = static_cast<uint64_t*>(MapZeroed(sizeof(uint64_t) * kFunctionCapacity));
  if (!g_function_slots || !g_function_address || !g_function_seen) return;
  if (mode == format::TraceMode::kTimed) {
    g_function_extent =
        static_cast<std::atomic<uint32_t>*>(MapZeroed(sizeof(uint32_t) * kFunctionCapacity));
    if (!g_function_extent) return;
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
    writer.add(format::TraceFunctionRecord{g_function_emitted, address,
                                           g_function_seen[g_function_emitted]});
  }
  if (Timed()) {
    WriteFullBuffers(writer);
    return;
  }
  int count = g_thread_count.load();
  for (int i = 0; i < count && i < kMaxThreads; ++i) {
    TraceThread* tt = g_threads[i];
    if (!tt || !tt->exiting.load() || !tt->alive.load()) continue;
    // A thread that is gone: its table has all its calls.
    if (syscall(SYS_tgkill, getpid(), tt->tid, 0) == 0 || errno != ESRCH) continue;
    WriteCounts(writer, tt, NowNs());
    tt->alive.store(false);
  }
  (void)everything;
}

uint64_t FunctionAddress(uint32_t id) {
  if (!g_function_address || id == 0 || id >= kFunctionCapacity) return 0;
  return g_function_address[id].load(std::memory_order_acquire);
}

void FlushTraceSitesInLocked(format::Writer& writer, uint64_t start, uint64_t size, uint64_t time) {
  if (g_mode.load() == 0) return;
  if (g_timed_hooks) return RetireFunctionsIn(start, start + size);
  const uint64_t range[2] = {start, start + size};
  int count = g_thread_count.load();
  for (int i = 0; i < count && i < kMaxThreads; ++i)
    if (TraceThread* tt = g_threads[i]; tt && tt->alive.load())
      WriteSiteCounts(writer, tt, time, range);
}

void EndThreadTrace() {
  TraceThread* tt = t_trace;
  if (!tt || !Running()) return;
  if (!g_timed_hooks) {
    tt->exiting.store(true);  // counted on until the thread is gone (DrainTraceLocked)
    return;
  }
  tt->in_hook = 1;  // hooks from here on (TLS destructors) are not this thread's calls any more
  t_sites = kNoSiteView;
  LockSession();
  DrainTraceLocked(*g_session.writer, false);
  WriteOpenEvents(*g_session.writer, tt);
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
  ResetBuffersAfterFork();
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

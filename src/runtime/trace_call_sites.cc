// Counts mode's call-site table: each thread's exact calls per call site, which the entry hook
// (trace_hooks.cc) counts on its fast path; here is its slow path, the table's growth, and the
// writer side that turns a table into a CALL_SITE_COUNTS record.
#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <utility>

#include "runtime/signals.h"
#include "runtime/trace_internal.h"

namespace hotline::rt {

SiteSlot g_no_sites[2];
__thread SiteView t_sites __attribute__((tls_model("initial-exec"))) = kNoSiteView;

SiteTable* NewSiteTable(uint64_t capacity) {
  auto* t = static_cast<SiteTable*>(MapZeroed(sizeof(SiteTable) + capacity * sizeof(SiteSlot)));
  if (t) t->capacity = capacity;
  return t;
}

namespace {

// The view of the thread's table for the entry hook.
SiteView ViewOf(const SiteTable* t) {
  return SiteView{const_cast<SiteSlot*>(t->slots), uint64_t(64 - __builtin_ctzll(t->capacity))};
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

}  // namespace

__attribute__((noinline)) void CountSlow(void* function, void* call_site, uint64_t hook_return) {
  if (InRuntimeNow())
    return;  // glibc's code run for the runtime (its thread's exit) is not counted
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

void WriteSiteCounts(format::Writer& writer, TraceThread* tt, uint64_t now, const uint64_t* range) {
  SiteTable* t = tt->sites.load(std::memory_order_acquire);
  if (!t) return;
  auto inside = [range](uint64_t address) { return address - range[0] < range[1] - range[0]; };
  uint64_t capacity = t->capacity;
  size_t quads_bytes = sizeof(uint64_t) * 4 * capacity;
  auto* quads = static_cast<uint64_t*>(MapZeroed(quads_bytes));
  if (!quads) return;
  uint64_t n = 0;
  for (uint64_t i = 0; i < capacity; ++i) {
    SiteSlot& s = t->slots[i];
    if (!s.hook_return || !s.calls) continue;
    if (range && !inside(s.call_site) && !inside(s.hook_return) &&
        !inside(FunctionAddress(uint32_t(s.callee_id))))
      continue;
    uint64_t* q = quads + 4 * n++;
    q[0] = s.call_site;
    q[1] = s.hook_return;
    q[2] = s.callee_id;
    q[3] = s.calls;
    s.calls = 0;  // records add up: what comes next is counted from here on
  }
  if (n > 0 || !range) writer.add(format::CallSiteCountsRecord{now, uint64_t(tt->tid), n, quads});
  munmap(quads, quads_bytes);
}

}  // namespace hotline::rt

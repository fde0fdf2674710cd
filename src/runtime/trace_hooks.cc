// The function tracer's hooks, __cyg_profile_func_enter and __cyg_profile_func_exit, which code
// built with -finstrument-functions calls around every function: counts mode's fast path (its
// slow path is in trace_call_sites.cc), and timed mode's shadow stack with the events of each
// entry and exit (trace_events.cc).
#include <atomic>
#include <cstdint>

#include "runtime/signals.h"
#include "runtime/threads.h"
#include "runtime/trace_internal.h"

#define HOTLINE_HOOK extern "C" __attribute__((visibility("default"), no_instrument_function))

namespace hotline::rt {
namespace {

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

// Whether the new entry runs on a stack that lies inside the frame of a traced function still
// alive (makecontext on a buffer in that frame, a coroutine): every frame's hook then ran below
// the new entry's, as after a longjmp out of them all. What tells them apart is where the new
// function's caller is: strictly inside a frame's region (between its hook's stack pointer and
// its own caller's), where after a longjmp it is where one of the abandoned frames was called
// from, or above them all. A frame's region is found by looking up its stack for its return
// address, within the thread's known stack only.
bool OnStackInsideFrame(const TraceThread* tt, uint32_t d, uint64_t sp, uint64_t call_site) {
  const ThreadSlot* slot = CurrentSlot();
  if (!slot || slot->bounds.high == 0) return false;
  uint64_t caller_sp = CallerStackPointer(sp, call_site);
  if (caller_sp == 0 || caller_sp < slot->bounds.low || caller_sp >= slot->bounds.high)
    return false;
  const auto* end = reinterpret_cast<const uint64_t*>(slot->bounds.high);
  for (uint32_t i = 0; i < d; ++i) {
    const ShadowFrame& f = tt->frames[i];
    if (f.sp >= caller_sp) continue;
    const auto* word = reinterpret_cast<const uint64_t*>(caller_sp);
    while (word < end && *word != f.call_site) ++word;
    if (word < end) return true;  // its return address is above the new caller: it holds it
  }
  return false;
}

__attribute__((noinline)) uint32_t PopDeadFrames(TraceThread* tt, uint32_t d, uint64_t sp,
                                                 uint64_t call_site, uint64_t hook_return) {
  if (tt->frames[0].sp < sp && OnStackInsideFrame(tt, d, sp, call_site)) return d;
  while (d > 0 && DeadFrame(tt->frames[d - 1], sp, call_site, hook_return)) {
    --d;
    if (tt->pos) AppendExit(tt);
  }
  // A frame higher on the stack than this entry's hook may still be a sibling of the new call
  // rather than its parent, abandoned by a longjmp back to their common caller (when its frame
  // is smaller than the new one's): a parent's hook ran at or above the stack pointer the new
  // function was called with, a sibling's below it.
  if (d > 0 && tt->frames[d - 1].sp > sp) {
    uint64_t caller_sp = CallerStackPointer(sp, call_site);
    while (d > 0 && tt->frames[d - 1].sp < caller_sp) {
      --d;
      if (tt->pos) AppendExit(tt);
    }
  }
  return d;
}

// The code range of frame i, from its function's and those it is inlined into (the same call
// site as its caller's), not from what the fast path stored (see CalleeCache).
void HostRange(const TraceThread* tt, uint32_t i, uint64_t* code, uint32_t* extent) {
  while (i > 0 && tt->frames[i].call_site == tt->frames[i - 1].call_site) --i;
  *code = tt->frames[i].function;
  *extent = FunctionExtent(tt->frames[i].id);
}

}  // namespace
}  // namespace hotline::rt

using namespace hotline::rt;

namespace {

// Everything but the common case: a new thread, a frame to close, a callee not in the cache,
// a full shadow stack.
__attribute__((noinline)) void EnterSlow(void* function, void* call_site, uint64_t sp,
                                         uint64_t hook_return) {
  // Code the runtime runs (glibc's, for the runtime's thread) is not the program's to count.
  if (InRuntimeNow()) return;
  TraceThread* tt = t_trace;
  if (__builtin_expect(!tt, 0)) {
    if (g_mode.load(std::memory_order_relaxed) == 0 || !(tt = AttachThread())) return;
  }
  if (tt->in_hook) return;  // a traced signal handler interrupting a hook
  tt->in_hook = 1;
  uint32_t d = tt->depth.load(std::memory_order_relaxed);
  if (d > 0) d = PopDeadFrames(tt, d, sp, uint64_t(call_site), hook_return);
  uint32_t caller = d ? tt->frames[d - 1].id : 0;
  CalleeCache& cache = tt->callee_cache[caller];
  uint32_t id =
      cache.callee == uint64_t(function) ? cache.callee_id : FunctionIdOf(tt, uint64_t(function));
  if (__builtin_expect(d < kShadowCapacity, 1)) {
    // The new frame's code range, and whether its caller called it from code outside the
    // caller's own (or its host's, for code inlined into another function).
    uint64_t code = uint64_t(function);
    uint32_t extent = FunctionExtent(id);
    uint64_t untraced_site = 0;
    if (d > 0) {
      uint64_t caller_code;
      uint32_t caller_extent;
      HostRange(tt, d - 1, &caller_code, &caller_extent);
      if (uint64_t(call_site) == tt->frames[d - 1].call_site) {
        code = caller_code;  // inlined into its caller
        extent = caller_extent;
      } else if (uint64_t(call_site) - caller_code >= caller_extent) {
        untraced_site = uint64_t(call_site);
      }
    }
    // The cache names the callee this caller last entered in the event stream (what the fast
    // path's one-byte entry says): a call past the end of the shadow stack is not in the stream.
    cache = CalleeCache{uint64_t(function), id, extent, code};
    uint64_t tick = 0;
    if (tt->pos) {
      tick = __builtin_ia32_rdtsc();
      AppendEntry(tt, id, tick, untraced_site);
    }
    tt->frames[d] = ShadowFrame{uint64_t(function),
                                sp,
                                uint64_t(call_site),
                                hook_return,
                                &tt->callee_cache[id],
                                tick,
                                id,
                                extent,
                                code};
    std::atomic_signal_fence(std::memory_order_release);
    ++d;
  }
  tt->depth.store(d, std::memory_order_relaxed);
  tt->in_hook = 0;
}

// Timed mode's entry of a function that its caller, alive and calling from its own code, did not
// enter last, when the function's id and code range are known: its entry event carries the id.
__attribute__((noinline)) void EnterOtherCallee(TraceThread* tt, uint32_t d, void* function,
                                                void* call_site, uint64_t sp,
                                                uint64_t hook_return) {
  const ShadowFrame& caller = tt->frames[d - 1];
  uint64_t address = uint64_t(function);
  int slot = int((address >> 4) & (kCacheSize - 1));
  uint32_t id = tt->cache_id[slot];
  uint64_t code = address;
  uint32_t extent = g_function_extent[id].load(std::memory_order_relaxed);
  if (caller.call_site == uint64_t(call_site)) {
    code = caller.code;  // inlined into its caller
    extent = caller.extent;
  }
  if (tt->cache_address[slot] != address || id == 0 || extent == 0)
    return EnterSlow(function, call_site, sp, hook_return);
  tt->in_hook = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  *caller.cache = CalleeCache{address, id, extent, code};
  uint64_t tick = 0;
  if (tt->pos) {
    tick = __builtin_ia32_rdtsc();
    AppendEntry(tt, id, tick);
  }
  tt->frames[d] = ShadowFrame{
      address, sp, uint64_t(call_site), hook_return, &tt->callee_cache[id], tick, id, extent, code};
  std::atomic_signal_fence(std::memory_order_release);
  tt->depth.store(d + 1, std::memory_order_relaxed);
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
      // The caller is alive and called it: from its own code, or as code inlined into it (the
      // caller's call site; at the same depth, another copy than the caller's own).
      bool direct = caller.sp > sp ? uint64_t(call_site) - caller.code < caller.extent ||
                                         caller.call_site == uint64_t(call_site)
                                   : caller.sp == sp && caller.call_site == uint64_t(call_site) &&
                                         caller.hook_return != hook_return;
      if (direct && cache.callee == uint64_t(function)) {
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
        frame = ShadowFrame{uint64_t(function),
                            sp,
                            uint64_t(call_site),
                            hook_return,
                            &tt->callee_cache[id],
                            0,
                            id,
                            cache.extent,
                            cache.code};
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
      if (direct) return EnterOtherCallee(tt, d, function, call_site, sp, hook_return);
    }
  }
  EnterSlow(function, call_site, sp, hook_return);
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
      if (tt->pos) AppendExit(tt);
    }
  }
  if (d > 0 && tt->frames[d - 1].function == uint64_t(function)) {
    --d;
    if (tt->pos) AppendExit(tt);
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

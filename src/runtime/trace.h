// Function tracing for programs built with -finstrument-functions: the runtime defines
// __cyg_profile_func_enter/exit. Counts mode counts each thread's calls per call site (the
// entry hook's two return addresses) in a small table and keeps no stack; timed mode keeps a
// shadow stack per thread and stamps every entry and exit with rdtsc, appended, mostly as one
// byte, to per-thread buffers that the writer thread drains (TRACE_EVENTS_SHORT); its calls are
// counted from those streams when the profile is read.
//
// The hooks run in ordinary context on the calling thread and allocate only with mmap. The
// sampling signal handler reads the shadow stack of the thread it interrupts (ShadowStack).
#pragma once

#include <cstdint>

#include "format/schema.h"
#include "format/writer.h"

namespace hotline::rt {

// Turns tracing on in `mode` (from the configuration). Call once at start-up.
void InitTrace(format::TraceMode mode);
format::TraceMode CurrentTraceMode();
// An instrumented function has run in this process (or in the parent it was forked from).
bool TraceHooksSeen();
// Nanoseconds per tick × 2^32 (timed mode), measured at InitTrace.
uint64_t TraceTickNsQ32();

// Async-signal-safe: writes the calling thread's shadow stack into `frames` as a SAMPLE with
// kSampleShadowStack wants it (frames[0] = pc, then traced function entries, innermost first).
// Returns 0 when the thread has no traced frames (the caller unwinds instead).
uint32_t ShadowStack(uint64_t pc, uint64_t* frames, uint32_t max, uint32_t* flags);

// Writer side, with the session lock held: TRACE_FUNCTION records for newly seen functions,
// and TRACE_EVENTS for every full event buffer (all buffers when `everything`).
void DrainTraceLocked(format::Writer& writer, bool everything);
// The calling thread ends: its call counts (counts mode) or its open event buffer are written
// (lock taken inside).
void EndThreadTrace();
// With the session lock held, at the end of the process: call counts of every thread still
// alive (counts mode), or their open event buffers.
void FinishTraceLocked(format::Writer& writer, uint64_t now);
// With the session lock held, before the unload of the module at [start, start + size) is
// written: counts mode's sites that name an address in it, of every thread, as they were at
// `time` (before the unload), so that the reader names them after that module and not after
// one mapped there later (dlclose, then dlopen of another library). Timed mode gives its
// functions' ids to no function loaded there later (TRACE_FUNCTION's time says which).
void FlushTraceSitesInLocked(format::Writer& writer, uint64_t start, uint64_t size, uint64_t time);
// hotline_size(): the calling thread's innermost traced call (its TRACE_FUNCTION id and the
// tick of its entry event), in timed mode. Otherwise false, and the size is counted as one
// without a call (SizesWithoutCall, written as the STATS `sizes_without_timed_call`).
bool CurrentTimedCall(uint64_t* function, uint64_t* entry_tick);
uint64_t SizesWithoutCall();
// In the child after fork: forget other threads, zero the counts (the parent reports what came
// before), or restart this thread's event stream with its open frames re-entered (counted in
// STATS trace_inherited_frames, so that they are not taken for the child's calls).
void ResetTraceAfterFork();

}  // namespace hotline::rt

// Watched variables: a hardware watchpoint (perf_event_open, PERF_TYPE_BREAKPOINT) on each
// watched object, in every thread. Each write traps after the instruction; the kernel sends the
// writing thread a real-time signal of the runtime's own (F_SETSIG on the event), whose handler
// reads the new value and the instruction pointer into the thread's hit ring. The writer thread
// drains the rings into WATCH_HITS records (docs/format.md, "Watched variables").
//
// Objects come from `hotline record --watch` (HOTLINE_WATCH, resolved by the CLI before the run)
// or from hotline_watch() in the program. At most kMaxWatches at once: the debug registers.
// Anything that fails switches that watch off and says why in a NOTE; the program never notices.
#pragma once

#include <cstddef>
#include <cstdint>

#include "format/writer.h"

namespace hotline::rt {

struct ThreadSlot;

inline constexpr int kMaxWatches = 4;  // x86-64 has four debug address registers

// At start-up, after the signal handlers, with no lock held: the command line's watches.
void InitWatches();
// Opens the watchpoints of every active watch on the slot's thread (not from signal handlers).
void ArmThreadWatches(ThreadSlot* slot);
// Closes them, keeping the kernel's counts for the next drain (not from signal handlers).
void DisarmThreadWatches(ThreadSlot* slot);
// With the session lock held: WATCH definitions and notes not yet written, then every thread's
// hits and the totals of closed watchpoints.
void DrainWatchesLocked(format::Writer& writer);
// In the child after fork: the parent's watchpoints are closed and watching stops (a child
// writes a profile of its own and is not watched).
void ResetWatchesAfterFork();

// The C API: hotline_watch / hotline_unwatch. 0 on success, -1 (and a NOTE) when the object
// cannot be watched.
int WatchObject(const void* address, size_t size, const char* name);
int UnwatchObject(const void* address);

}  // namespace hotline::rt

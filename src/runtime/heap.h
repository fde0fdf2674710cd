// The heap collector (`hotline record --heap`, or --heap-sample for its sampled mode, in
// heap_sampling.cc): malloc and friends, operator new/delete and
// anonymous mmap/munmap are interposed; every allocation is recorded with its size, address,
// time and call stack, every release with its address. The allocating thread walks its stack
// (stack_walk.h, libunwind where the walker gives up) and writes into its own ring; a stack it
// has sent before costs only its hash. The writer
// thread (or the thread itself when its ring is full: nothing is ever dropped) turns rings into
// ALLOC and FREE records.
#pragma once

#include <cstdint>

#include "format/writer.h"

namespace hotline::rt {

// Switches recording on (from StartSession, when the configuration asks for it) and records the
// allocations the bootstrap arena served before the real allocator was found. `sample_bytes` ≠ 0
// selects the sampled mode (one allocation per that many bytes on average, each weighted by
// the reader); `seed` ≠ 0 makes its choices repeatable.
void StartHeap(format::Writer& writer, uint64_t now, uint64_t sample_bytes, uint64_t seed);
bool HeapOn();
// With the session lock held: turns every thread's events into records.
void DrainHeapLocked(format::Writer& writer);
// The calling thread ends: its events are written (lock taken inside) and its ring reused.
void EndThreadHeap();
// In the child after fork: the parent writes what the rings held; the child starts afresh.
void ResetHeapAfterFork();

}  // namespace hotline::rt

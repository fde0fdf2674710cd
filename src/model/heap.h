// What the heap did, from a profile's ALLOC and FREE records (`hotline record --heap`): peak,
// totals, temporary allocations, leaks, allocation sites and sizes. Built from the raw records
// the way Profile is built from samples; views only print it.
//
// Definitions (docs/heap.md):
//  - allocation calls: ALLOC records of the heap (malloc, calloc, realloc, the aligned family,
//    operator new and new[]); anonymous mmap is counted apart (mmap_*).
//  - free calls: free, operator delete and delete[] of a known block; the old block a realloc
//    releases is not a call of its own.
//  - temporary: a block freed by the thread that allocated it before that thread allocated
//    anything else (heaptrack's definition, per thread).
//  - leaked: blocks still live at the end of the run.
//  - peak: the largest sum of live heap bytes, and when it was first reached.
//
// A profile recorded with --heap-sample holds only sampled allocations, each standing for
// 1 / (1 - exp(-size / N)) allocations of its size (format.md, ALLOC): every count and byte
// total is then the sum of those weights, an unbiased estimate, rounded at the end; temporary
// allocations cannot be told from samples and stay 0 (HeapProfile::sample_bytes says which).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "format/raw_profile.h"
#include "model/build.h"

namespace hotline::model {

// One frame of an allocation's stack; an inlined function is a frame of its own, at the same
// address as the function it was inlined into.
struct HeapFrame {
  std::string function;  // "[unknown]" when nothing is known, "[module]" without symbols
  std::string file;
  uint32_t line = 0;
  uint64_t address = 0;   // the return address (the allocator's caller: its call)
  bool system = false;    // in the allocator, the standard library or another system library
  std::string decl_file;  // where the function is defined; "" when unknown
  uint32_t decl_line = 0;
};

// The blocks allocated from one full stack.
struct HeapStack {
  std::vector<HeapFrame> frames;  // innermost first
  uint64_t calls = 0, bytes = 0;
  uint64_t live_calls = 0, live_bytes = 0;  // still allocated at the end
};

// The callers above a site that allocated through it, `calls` blocks of `bytes`.
struct HeapChain {
  std::vector<std::string> frames;  // "function (file:line)", the site's caller first
  uint64_t calls = 0, bytes = 0;
};

// The place blocks were allocated from: the first frame of the program's own code, outside the
// allocator and the standard library (or, with HeapOptions::allocator_frames, the allocator's
// caller as recorded), as function and line.
struct HeapSite {
  std::string function;  // "[unknown]" when the stack was lost
  std::string file;
  uint32_t line = 0;
  std::string via;  // the library function the site called that allocated; "" when none
  uint64_t calls = 0, bytes = 0;
  uint64_t peak_bytes = 0;  // of this site's blocks live at the moment of the peak
  uint64_t temporary_calls = 0;
  uint64_t leaked_calls = 0, leaked_bytes = 0;
  std::vector<HeapChain> chains;  // the top caller chains, by bytes
};

// Blocks still live at the end that share one full stack.
struct HeapLeak {
  uint64_t calls = 0, bytes = 0;
  std::vector<std::string> stack;  // "function (file:line)", innermost first
};

struct HeapPoint {
  uint64_t time_ns = 0;  // since the first heap event
  uint64_t bytes = 0;    // live heap bytes after the event
};

struct HeapProfile {
  uint64_t peak_bytes = 0, peak_time_ns = 0;  // peak_time_ns: since the first heap event
  uint64_t total_bytes = 0, alloc_calls = 0, free_calls = 0, temporary_calls = 0;
  uint64_t leaked_bytes = 0, leaked_calls = 0;
  uint64_t mmap_calls = 0, mmap_bytes = 0, munmap_calls = 0, mmap_leaked_bytes = 0;
  uint64_t unknown_frees = 0;     // releases of blocks the profile never saw allocated
  std::vector<HeapSite> sites;    // unordered; views sort
  std::vector<HeapStack> stacks;  // unordered
  std::vector<HeapLeak> leaks;    // by bytes, largest first
  // (lower bound of a power-of-two size class, calls): 0, 1, 2, 4, 8, ...
  std::vector<std::pair<uint64_t, uint64_t>> size_histogram;
  // For graphs: a point per event up to 1024 events, then 512 to 1024 a power-of-two number of
  // events apart; and the last event's.
  std::vector<HeapPoint> timeline;
  // Sampled mode (--heap-sample): the mean bytes between samples, 0 when every allocation was
  // recorded (the numbers above are then exact); the allocations sampled; and the standard
  // errors of total_bytes and of the live bytes at the peak, estimated from the samples
  // (√Σ size² (1 − p) / p² over the blocks counted).
  uint64_t sample_bytes = 0;
  uint64_t sampled_calls = 0;
  uint64_t total_bytes_error = 0;
  uint64_t peak_bytes_error = 0;
  bool estimated() const { return sample_bytes != 0; }
};

struct HeapOptions {
  // Sites at the allocator's caller, whatever code that is (std::allocator's new_allocator.h),
  // instead of at the program's own line.
  bool allocator_frames = false;
  uint32_t chain_depth = 4;  // callers per chain
  uint32_t chains = 3;       // chains per site
};

// Fails when the profile holds no heap records (recorded without --heap).
Expected<HeapProfile> BuildHeapProfile(const format::RawProfile& raw, AddressResolver& resolver,
                                       const HeapOptions& options = {});

// A heap read from a file by LoadHeapProfile.
struct HeapLoad {
  Expected<HeapProfile> heap;  // fails like BuildHeapProfile, or when the file changed meanwhile
  format::ReadStats stats;     // what the reader saw, as format::ReadProfileFile gives it
  // The time profile of the same reading, when asked for: what LoadProfile gives for a file of
  // one run.
  std::optional<Expected<Profile>> profile;
};

// The heap of the profile at `path` (of its first run, when it holds several), built while the
// records are read instead of from a RawProfile: what is kept grows with the distinct stacks
// and the blocks live at once, not with the events (docs/heap.md, "Reading a heap profile").
// One reading puts the events back into the program's order as they come, and with `profile`
// also builds the time profile; only a file whose threads' events come further out of order
// than the runtime writes them is read twice more, the exact way (once to learn how far out of
// order, once to build). A thread of its own applies the events, up to 8 batches behind the
// reading, in file order: the result does not depend on its timing, and equals
// BuildHeapProfile's on the whole file. Fails like format::ReadProfileFile when the file cannot
// be read at all.
Expected<HeapLoad> LoadHeapProfile(const std::string& path, AddressResolver& resolver,
                                   const HeapOptions& options = {},
                                   std::optional<BuildOptions> profile = std::nullopt);

}  // namespace hotline::model

// Stack walks from a signal's ucontext, async-signal-safe. Frames are written innermost first:
// the interrupted instruction, then return addresses.
#pragma once

#include <cstdint>

namespace hotline::rt {

struct StackBounds {
  uint64_t low = 0, high = 0;  // [low, high) of the thread's stack; 0,0 when unknown
};

// Returns the number of frames written (≤ max). Sets format::SampleFlags bits in *flags:
// truncated when `max` was reached, broken when the walk stopped on a bad frame.
uint32_t UnwindFramePointers(void* ucontext, const StackBounds& bounds, uint64_t* frames,
                             uint32_t max, uint32_t* flags);
uint32_t UnwindDwarf(void* ucontext, uint64_t* frames, uint32_t max, uint32_t* flags);

// Call once before the first signal (not async-signal-safe): sets libunwind's caching.
void InitUnwinder();

}  // namespace hotline::rt

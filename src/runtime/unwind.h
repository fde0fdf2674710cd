// Stack walks from a signal's ucontext, async-signal-safe. Frames are written innermost first:
// the interrupted instruction, then return addresses.
#pragma once

#include <cstdint>

namespace hotline::rt {

struct StackBounds {
  uint64_t low = 0, high = 0;  // [low, high) of the thread's stack; 0,0 when unknown
};

// Where a walk may read the interrupted thread's stack, and how. Inside a thread's known stack,
// at or above its stack pointer, a plain load cannot fault. Without known bounds (a thread that
// existed before the runtime started) the window is a guess, 8 MiB above the stack pointer, and
// every word is read by the kernel (process_vm_readv on this process), which fails where a
// load would fault. Async-signal-safe.
struct StackWindow {
  uint64_t low = 0, high = 0;
  bool known = false;

  StackWindow(const StackBounds& bounds, uint64_t sp);
  bool read(uint64_t address, uint64_t* value) const;
};

// Returns the number of frames written (≤ max). Sets format::SampleFlags bits in *flags:
// truncated when `max` was reached, broken when the walk stopped on a bad frame.
uint32_t UnwindFramePointers(void* ucontext, const StackBounds& bounds, uint64_t* frames,
                             uint32_t max, uint32_t* flags);
uint32_t UnwindDwarf(void* ucontext, uint64_t* frames, uint32_t max, uint32_t* flags);

// The end of the .eh_frame entry (FDE) that holds `pc`, or 0 when none does.
uint64_t UnwindEntryEnd(uint64_t pc);

// Call once before the first signal (not async-signal-safe): sets libunwind's caching.
void InitUnwinder();

}  // namespace hotline::rt

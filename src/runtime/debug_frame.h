// Unwind rows for code whose only call-frame information is in .debug_frame (fpc's output, gcc
// with -fno-asynchronous-unwind-tables -g). Debian's libunwind is built without
// --enable-debug-frame, so it stops at such code; the walk in unwind.cc steps through it with
// these rows instead and hands back to libunwind for the frames that have .eh_frame.
//
// Tables are built when a module appears (writer thread or constructor, allocation allowed) and
// are never freed: a signal handler on another thread may be reading one at any moment.
#pragma once

#include <cstdint>

#include "runtime/unwind.h"

namespace hotline::rt {

// Decodes the .debug_frame of the ELF file at `path`, loaded with `bias` over [start,
// start + size), into a sorted table of rows for the code that has no .eh_frame entry, and
// makes it visible to StepDebugFrame. A table of an earlier module overlapping this range is
// retired (that module is gone). Also finds the range of the program's entry function. Not
// async-signal-safe; callers serialise (the session lock).
void AddDebugFrameModule(const char* path, uint64_t bias, uint64_t start, uint64_t size);

enum class CfiStep {
  kNotCovered,  // no .debug_frame row holds the pc: ask libunwind
  kStepped,     // *ip, *sp, *bp now describe the caller
  kOutermost,   // the rows say there is no caller (return address undefined)
  kFailed,      // a rule we cannot follow, or a read outside [low, high)
};

// One step from the frame (ip, sp, bp), looking up `lookup_pc` (ip, or ip - 1 for a return
// address). Reads the stack only through `window`. Async-signal-safe.
CfiStep StepDebugFrame(uint64_t lookup_pc, uint64_t* ip, uint64_t* sp, uint64_t* bp,
                       const StackWindow& window);

// True when `pc` lies in the function that holds the program's entry point (_start): a walk
// that reaches it is complete, whatever unwind information _start carries (fpc's describes
// it as an ordinary function, and its "return address" is a stack word). Async-signal-safe.
bool InEntryFunction(uint64_t pc);

}  // namespace hotline::rt

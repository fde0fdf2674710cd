// The heap collector's stack walker: the allocating stack of every event of `record --heap`,
// frame for frame what libunwind's unw_backtrace gives, at a fraction of its cost.
//
// Two savings. Unwind rules are cached per thread by return address: the common x86-64 frame
// (CFA = rsp or rbp + k, the return address at CFA - 8, rbp unchanged or saved at CFA + k) is
// read once from the module's .eh_frame, then costs one table probe. And the part of the stack
// unchanged since the thread's previous walk is not walked again: the walk keeps, per frame, its
// registers and the stack words it read; when a new walk reaches a frame whose pc, rsp and rbp
// equal those of a frame of the previous walk, and every word the previous walk read from there
// outwards still holds the value it read, the rest of the walk would read the same words, apply
// the same rules and give the same frames, so they are reused with their hash.
//
// Whatever the walker does not know (a frame without .eh_frame, a rule that is not the common
// one, a signal frame, a thread whose stack bounds are unknown, a stack word outside them) makes
// it give up: the caller then asks unw_backtrace, as before. It reads the stack only inside the
// thread's bounds and above the first frame's stack pointer, and unwind tables only inside the
// loaded segments that hold them: it cannot fault.
#pragma once

#include <cstdint>

#include "unwind/eh_frame.h"

namespace hotline::rt {

inline constexpr int kMaxWalkFrames = 128;

// The hash of a stack, outermost frame first: a walk that reuses the previous walk's outer
// frames reuses their hash. Never 0 (0 means "no stack").
inline uint64_t HashStackStep(uint64_t outer_hash, uint64_t pc) {
  uint64_t h = (outer_hash ^ pc) * 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 31);
}
inline constexpr uint64_t kStackHashSeed = 0x9E3779B97F4A7C15ull;
uint64_t HashStack(const uint64_t* frames, int depth);  // frames innermost first

// One frame of a walk: its registers, and the stack words the step to its caller read.
struct WalkedFrame {
  uint64_t pc, sp, bp;
  uint64_t ra_slot, ra_value;  // ra_slot 0: the walk ended here without reading
  uint64_t bp_slot, bp_value;  // bp_slot 0: rbp carried over
  uint64_t hash;               // of this frame and every frame outside it
};

// Per-thread state of the walker (lives in the thread's heap ring; only its thread uses it).
struct StackWalker {
  static constexpr int kRuleSlots = 8192;
  unwind::StepRule rules[kRuleSlots];  // by lookup address (return address - 1)
  // The last walk, outermost frame first: frames[depth - 1] is the innermost.
  WalkedFrame frames[kMaxWalkFrames];
  WalkedFrame fresh[kMaxWalkFrames];  // the walk's scratch (kept off the program's stack)
  int depth = 0;
  bool reusable = false;  // false: the last walk was cut at kMaxWalkFrames, or gave up
  uint64_t walks = 0;     // stacks asked for since the loader's counters were last read
  uint64_t loader_adds = 0, loader_subs = 0;
  uint64_t reused_frames = 0;  // frames taken over from the previous walk, in all
};

// Empties the walker (a new thread, a forked child, modules loaded or unloaded).
void ResetWalker(StackWalker* walker, bool keep_rules);

// Walks the stack from a frame whose registers are (pc, sp, bp), pc being a return address.
// Returns the depth (≤ kMaxWalkFrames) and sets *hash, or returns -1 when the walker does not
// know a frame (the caller asks libunwind). [low, high) are the thread's stack bounds. The
// frames are then walker->frames[depth - 1] (innermost) down to walker->frames[0].
int WalkStack(StackWalker* walker, uint64_t pc, uint64_t sp, uint64_t bp, uint64_t low,
              uint64_t high, uint64_t* hash);

}  // namespace hotline::rt

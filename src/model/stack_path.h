// One thread's stack followed from sample to sample over the trie of Profile::stack_frames:
// which outer frames the next stack keeps and which it enters, in time proportional to the
// frames that change rather than to the depth (a recursion 20,000 deep moving one level per
// sample costs one step a sample, not 20,000). Drives the call graph (model/call_graph.h) and
// the exporters that replay samples in time order.
//
// Holds a pointer to the frame table, which may grow between moves (indices stay valid). Not
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "model/profile.h"

namespace hotline::model {

class StackPath {
 public:
  explicit StackPath(const std::vector<StackFrame>& frames) : frames_(&frames) {}

  // Moves to the stack whose innermost frame is `leaf` (invalid: a stack without frames).
  // Returns how many outer frames of the new stack hold the same functions, one for one, as the
  // previous stack's: the frames the two share, and past them as long as the functions agree
  // (frames at other lines of the same functions).
  size_t moveTo(FrameId leaf);
  // Forgets the stack: the next move enters every frame of its stack.
  void clear();

  // The functions of the current stack, outermost first.
  std::span<const FunctionId> functions() const { return functions_; }

 private:
  const std::vector<StackFrame>* frames_;
  std::vector<FrameId> path_;  // the current stack's frames, outermost first
  std::vector<FunctionId> functions_;
  std::vector<FrameId> entered_;  // scratch: the frames a move enters, innermost first
};

}  // namespace hotline::model

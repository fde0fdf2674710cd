#include "model/stack_path.h"

namespace hotline::model {

size_t StackPath::moveTo(FrameId leaf) {
  const std::vector<StackFrame>& frames = *frames_;
  // Up from the new leaf to the first frame the current stack holds at the same depth: the
  // innermost frame the two stacks share (a frame's depth says where it would be on the path).
  entered_.clear();
  FrameId at = leaf;
  while (at.valid()) {
    const StackFrame& f = frames[at.index()];
    if (f.depth <= path_.size() && path_[f.depth - 1] == at) break;
    entered_.push_back(at);
    at = f.caller;
  }
  size_t shared = at.valid() ? frames[at.index()].depth : 0;
  size_t depth = shared + entered_.size();
  size_t same = shared;
  while (same < functions_.size() && same < depth &&
         functions_[same] ==
             frames[entered_[entered_.size() - 1 - (same - shared)].index()].function)
    ++same;
  path_.resize(shared);
  functions_.resize(shared);
  for (size_t k = entered_.size(); k-- > 0;) {
    path_.push_back(entered_[k]);
    functions_.push_back(frames[entered_[k].index()].function);
  }
  return same;
}

void StackPath::clear() {
  path_.clear();
  functions_.clear();
}

}  // namespace hotline::model

// The stacks' times per thread, and from them each line's and each function-line's inclusive
// time, counted once per sample however often a recursion puts the line on the stack.
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/profile_builder.h"

namespace hotline::model {

void ProfileBuilder::addStackTime(StackId stack, uint32_t thread_index, uint64_t ns,
                                  uint64_t samples) {
  constexpr uint32_t kNone = ~0u;
  if (stack_time_head_.size() <= stack.index()) stack_time_head_.resize(stack.index() + 1, kNone);
  uint32_t at = stack_time_head_[stack.index()];
  while (at != kNone && profile_.stack_times[at].thread != thread_index) at = stack_time_next_[at];
  if (at == kNone) {
    at = static_cast<uint32_t>(profile_.stack_times.size());
    profile_.stack_times.push_back(StackTime{stack, thread_index, 0, 0});
    stack_time_next_.push_back(stack_time_head_[stack.index()]);
    stack_time_head_[stack.index()] = at;
  }
  StackTime& t = profile_.stack_times[at];
  t.ns += ns;
  t.samples += samples;
}

void ProfileBuilder::addLineTimes() {
  // A line (or a function's line) on the stack twice, in a recursion, counts once per sample:
  // a stack's time goes to the line of each of its frames that has no frame of the same line
  // outside it. So, over the trie: each frame whose line is on none of its callers gets the time
  // of all the stacks through it; found in one walk down the trie, counting the frames of each
  // line on the way.
  const std::vector<StackFrame>& frames = profile_.stack_frames;
  size_t n = frames.size();
  std::vector<uint64_t> through(n, 0);  // the time of the stacks that end at or under a frame
  std::vector<uint8_t> timed(n, 0);     // whether any stack with a time ends at or under it
  for (const StackTime& t : profile_.stack_times) {
    FrameId leaf = profile_.stacks[t.stack.index()].leaf;
    if (!leaf.valid()) continue;
    through[leaf.index()] += t.ns;
    timed[leaf.index()] = 1;
  }
  for (size_t i = n; i-- > 0;) {
    FrameId caller = frames[i].caller;
    if (!caller.valid()) continue;
    through[caller.index()] += through[i];
    timed[caller.index()] |= timed[i];
  }
  // The function-line row of each frame with a time.
  std::unordered_map<uint64_t, uint32_t> function_line;  // function << 32 | line → index
  std::vector<uint32_t> row(n, ~0u);
  for (size_t i = 0; i < n; ++i) {
    if (!timed[i]) continue;
    uint64_t key = (uint64_t{frames[i].function.index()} << 32) | frames[i].line.index();
    auto [it, added] = function_line.try_emplace(key, profile_.function_lines.size());
    if (added) profile_.function_lines.push_back(FunctionLine{frames[i].function, frames[i].line});
    row[i] = it->second;
  }
  for (const StackTime& t : profile_.stack_times) {
    FrameId leaf = profile_.stacks[t.stack.index()].leaf;
    if (leaf.valid()) profile_.function_lines[row[leaf.index()]].self_ns += t.ns;
  }
  // Children of each frame, by counting sort on the caller (index n: the outermost frames).
  std::vector<uint32_t> first_child(n + 2, 0), children(n);
  for (size_t i = 0; i < n; ++i)
    ++first_child[(frames[i].caller.valid() ? frames[i].caller.index() : n) + 1];
  for (size_t i = 1; i < n + 2; ++i) first_child[i] += first_child[i - 1];
  std::vector<uint32_t> next(first_child.begin(), first_child.end() - 1);
  for (size_t i = 0; i < n; ++i)
    children[next[frames[i].caller.valid() ? frames[i].caller.index() : n]++] =
        static_cast<uint32_t>(i);
  std::vector<uint32_t> line_open(profile_.lines.size(), 0);
  std::vector<uint32_t> row_open(profile_.function_lines.size(), 0);
  // Depth-first, without recursion: (frame, its next child to visit) per level.
  std::vector<std::pair<uint32_t, uint32_t>> walk;
  walk.emplace_back(static_cast<uint32_t>(n), first_child[n]);
  while (!walk.empty()) {
    auto& [at, child] = walk.back();
    if (child == first_child[at + 1]) {
      if (at != n) {
        --line_open[frames[at].line.index()];
        if (row[at] != ~0u) --row_open[row[at]];
      }
      walk.pop_back();
      continue;
    }
    uint32_t f = children[child++];
    if (!timed[f]) continue;
    if (line_open[frames[f].line.index()]++ == 0)
      profile_.lines[frames[f].line.index()].inclusive_ns += through[f];
    if (row_open[row[f]]++ == 0) profile_.function_lines[row[f]].inclusive_ns += through[f];
    walk.emplace_back(f, first_child[f]);
  }
}

}  // namespace hotline::model

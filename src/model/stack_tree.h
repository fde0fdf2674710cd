// Trees of time from the sampled stacks (Profile::stacks, stack_frames, stack_times), for flame
// graphs: the stacks merged by function along their paths, from the outermost frame in (callers
// first) or from the innermost frame out (callees first, the inverted graph). Also each function's
// hottest line, for views that jump from a function to its source.
//
// Guarantees: nodes[0] is the root and holds the time of every stack chosen; a node's parent comes
// before it; for every node, self_ns + Σ children's total_ns = total_ns. Callers first takes
// time and memory in the profile's frames (the trie of Profile::stack_frames), however deep
// its stacks; callees first, time in the stacks' depths added up (a recursion's stacks, one per
// level, make that the square of its depth) and memory in the tree.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/profile.h"

namespace hotline::model {

struct StackTreeNode {
  FunctionId function;    // invalid for the root
  uint32_t parent = 0;    // index into StackTree::nodes; the root is its own parent
  uint64_t total_ns = 0;  // time of the stacks through this node
  uint64_t self_ns = 0;   // time of the stacks that end here
};

struct StackTree {
  std::vector<StackTreeNode> nodes;
};

enum class StackOrder { kCallersFirst, kCalleesFirst };

// The tree of the stacks of `thread` (an index into Profile::threads), or of every thread.
StackTree BuildStackTree(const Profile& profile, StackOrder order,
                         std::optional<uint32_t> thread = std::nullopt);

// For each function (by FunctionId index), the line of its own frames that carries the most time
// (each stack counted once per line, callees included): where it spends its time, or calls what
// does. Invalid for functions no stack holds.
std::vector<LineId> HottestLines(const Profile& profile);

}  // namespace hotline::model

#include "model/stack_tree.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

namespace hotline::model {
namespace {

// Each stack's time over the threads chosen, by StackId index.
std::vector<uint64_t> StackNs(const Profile& p, std::optional<uint32_t> thread) {
  std::vector<uint64_t> ns(p.stacks.size(), 0);
  for (const StackTime& t : p.stack_times)
    if (!thread || t.thread == *thread) ns[t.stack.index()] += t.ns;
  return ns;
}

// (parent node, function) → child node, open addressing: the trees of large profiles have
// millions of nodes, where std::unordered_map spends most of the time allocating and rehashing.
class ChildIndex {
 public:
  ChildIndex() : keys_(1024, kEmpty), values_(1024) {}

  // The child for `key`, made by `make()` when there is none yet.
  template <typename Make>
  uint32_t find(uint64_t key, Make make) {
    if (2 * (size_ + 1) > keys_.size()) grow();
    size_t i = slot(key);
    if (keys_[i] == key) return values_[i];
    keys_[i] = key;
    values_[i] = make();
    ++size_;
    return values_[i];
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // no node has ~0 as (parent, function)
  size_t slot(uint64_t key) const {
    size_t mask = keys_.size() - 1;
    // Fibonacci hashing: the product's top bits, which every bit of the key reaches. (Bits from
    // the middle were one slot of a few for keys that differ only in the parent, the high half:
    // a deep chain of one function probed on and on.)
    size_t i = static_cast<size_t>((key * 0x9e3779b97f4a7c15ull) >> shift_) & mask;
    while (keys_[i] != kEmpty && keys_[i] != key) i = (i + 1) & mask;
    return i;
  }
  void grow() {
    --shift_;
    std::vector<uint64_t> keys(keys_.size() * 2, kEmpty);
    std::vector<uint32_t> values(keys.size());
    keys.swap(keys_);
    values.swap(values_);
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] != kEmpty) {
        size_t j = slot(keys[i]);
        keys_[j] = keys[i];
        values_[j] = values[i];
      }
  }
  std::vector<uint64_t> keys_;
  std::vector<uint32_t> values_;
  size_t size_ = 0;
  int shift_ = 64 - 10;  // 64 − log2(keys_.size())
};

}  // namespace

namespace {

// Callers first, over the trie of frames rather than stack by stack: each frame of a stack with
// time maps to the tree node of its function under its caller's node, and adds the time of the
// stacks through it. The nodes are numbered as a walk of the stacks in StackId order would make
// them (by the first such stack through a node, then depth), so the tree does not depend on how
// it was built.
StackTree CallersFirst(const Profile& p, const std::vector<uint64_t>& ns) {
  const std::vector<StackFrame>& frames = p.stack_frames;
  size_t n = frames.size();
  constexpr uint32_t kNone = ~0u;
  std::vector<uint64_t> own(n, 0), through(n, 0);
  std::vector<uint32_t> first_stack(n, kNone);
  StackTree tree;
  tree.nodes.push_back({});
  for (uint32_t s = 0; s < p.stacks.size(); ++s) {
    if (ns[s] == 0) continue;
    tree.nodes[0].total_ns += ns[s];
    FrameId leaf = p.stacks[s].leaf;
    if (!leaf.valid()) {
      tree.nodes[0].self_ns += ns[s];
      continue;
    }
    own[leaf.index()] += ns[s];
    first_stack[leaf.index()] = std::min(first_stack[leaf.index()], s);
  }
  for (size_t i = n; i-- > 0;) {
    through[i] += own[i];
    if (FrameId caller = frames[i].caller; caller.valid()) {
      through[caller.index()] += through[i];
      first_stack[caller.index()] = std::min(first_stack[caller.index()], first_stack[i]);
    }
  }
  ChildIndex children;
  std::vector<uint32_t> node_of(n, 0);
  std::vector<uint32_t> node_first_stack(1, 0);
  for (size_t i = 0; i < n; ++i) {
    if (through[i] == 0) continue;
    const StackFrame& f = frames[i];
    uint32_t parent = f.caller.valid() ? node_of[f.caller.index()] : 0;
    uint32_t node = children.find((uint64_t{parent} << 32) | f.function.index(), [&] {
      tree.nodes.push_back({f.function, parent, 0, 0});
      node_first_stack.push_back(kNone);
      return static_cast<uint32_t>(tree.nodes.size() - 1);
    });
    node_of[i] = node;
    tree.nodes[node].total_ns += through[i];
    tree.nodes[node].self_ns += own[i];
    node_first_stack[node] = std::min(node_first_stack[node], first_stack[i]);
  }
  // A stack passes one node per depth, so (first stack, depth) orders the nodes without ties.
  std::vector<uint32_t> depth(tree.nodes.size(), 0);
  for (size_t k = 1; k < tree.nodes.size(); ++k) depth[k] = depth[tree.nodes[k].parent] + 1;
  std::vector<uint32_t> order(tree.nodes.size());
  for (uint32_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin() + 1, order.end(), [&](uint32_t a, uint32_t b) {
    return node_first_stack[a] != node_first_stack[b] ? node_first_stack[a] < node_first_stack[b]
                                                      : depth[a] < depth[b];
  });
  std::vector<uint32_t> renumbered(order.size());
  for (uint32_t k = 0; k < order.size(); ++k) renumbered[order[k]] = k;
  std::vector<StackTreeNode> nodes(tree.nodes.size());
  for (uint32_t k = 0; k < order.size(); ++k) {
    nodes[k] = tree.nodes[order[k]];
    if (k) nodes[k].parent = renumbered[nodes[k].parent];
  }
  tree.nodes = std::move(nodes);
  return tree;
}

// Callees first, path by path from the innermost frame out. Stacks that differ only in their
// lines are one path of functions: their time is first added up by the node of a trie of
// functions (callers first; a frame's caller is numbered before it), then each path is walked
// once, at its first stack, so the nodes are made in the order a walk of every stack would make
// them. TeX's and Perl's profiles have hundreds of thousands of stacks 80 frames deep that way.
StackTree CalleesFirst(const Profile& p, const std::vector<uint64_t>& ns) {
  const std::vector<StackFrame>& frames = p.stack_frames;
  std::vector<uint32_t> path_of(frames.size(), 0);
  std::vector<FunctionId> path_function(1);
  std::vector<uint32_t> path_caller(1, 0);
  ChildIndex paths;
  for (size_t i = 0; i < frames.size(); ++i) {
    const StackFrame& f = frames[i];
    uint32_t caller = f.caller.valid() ? path_of[f.caller.index()] : 0;
    path_of[i] = paths.find((uint64_t{caller} << 32) | f.function.index(), [&] {
      path_function.push_back(f.function);
      path_caller.push_back(caller);
      return static_cast<uint32_t>(path_function.size() - 1);
    });
  }
  StackTree tree;
  tree.nodes.push_back({});
  std::vector<uint64_t> path_ns(path_function.size(), 0);
  std::vector<uint32_t> walk;  // paths with time, by their first stack
  for (uint32_t s = 0; s < p.stacks.size(); ++s) {
    if (ns[s] == 0) continue;
    tree.nodes[0].total_ns += ns[s];
    FrameId leaf = p.stacks[s].leaf;
    if (!leaf.valid()) {
      tree.nodes[0].self_ns += ns[s];
      continue;
    }
    uint32_t path = path_of[leaf.index()];
    if (path_ns[path] == 0) walk.push_back(path);
    path_ns[path] += ns[s];
  }
  ChildIndex children;
  for (uint32_t leaf : walk) {
    uint64_t t = path_ns[leaf];
    uint32_t node = 0;
    for (uint32_t k = leaf; k != 0; k = path_caller[k]) {
      FunctionId function = path_function[k];
      uint64_t key = (uint64_t{node} << 32) | function.index();
      node = children.find(key, [&] {
        tree.nodes.push_back({function, node, 0, 0});
        return static_cast<uint32_t>(tree.nodes.size() - 1);
      });
      tree.nodes[node].total_ns += t;
    }
    tree.nodes[node].self_ns += t;
  }
  return tree;
}

}  // namespace

StackTree BuildStackTree(const Profile& p, StackOrder order, std::optional<uint32_t> thread) {
  std::vector<uint64_t> ns = StackNs(p, thread);
  return order == StackOrder::kCallersFirst ? CallersFirst(p, ns) : CalleesFirst(p, ns);
}

std::vector<LineId> HottestLines(const Profile& p) {
  std::vector<LineId> hottest(p.functions.size());
  std::vector<uint64_t> best(p.functions.size(), 0);
  // By function, then line: a tie goes to the lower line.
  for (const FunctionLine& fl : p.function_lines) {
    uint32_t function = fl.function.index();
    if (fl.inclusive_ns > best[function]) {
      best[function] = fl.inclusive_ns;
      hottest[function] = fl.line;
    }
  }
  return hottest;
}

}  // namespace hotline::model

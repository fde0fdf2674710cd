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

StackTree BuildStackTree(const Profile& p, StackOrder order, std::optional<uint32_t> thread) {
  StackTree tree;
  tree.nodes.push_back({});
  ChildIndex children;
  std::vector<uint64_t> ns = StackNs(p, thread);
  for (uint32_t s = 0; s < p.stacks.size(); ++s) {
    if (ns[s] == 0) continue;
    std::span<const StackFrame> frames = p.framesOf(StackId(s));
    uint32_t node = 0;
    tree.nodes[0].total_ns += ns[s];
    for (size_t i = 0; i < frames.size(); ++i) {
      const StackFrame& f =
          order == StackOrder::kCallersFirst ? frames[i] : frames[frames.size() - 1 - i];
      uint64_t key = (uint64_t{node} << 32) | f.function.index();
      node = children.find(key, [&] {
        tree.nodes.push_back({f.function, node, 0, 0});
        return static_cast<uint32_t>(tree.nodes.size() - 1);
      });
      tree.nodes[node].total_ns += ns[s];
    }
    tree.nodes[node].self_ns += ns[s];
  }
  return tree;
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

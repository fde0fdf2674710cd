#include "model/call_graph.h"

#include <algorithm>

namespace hotline::model {

namespace {

// Per (thread, function): how many of its frames are on the stack, and the credited sum
// (self time + Σ edge time) it gained on this thread.
struct FunctionActivity {
  uint32_t active = 0;
  uint64_t credited = 0;
};

struct EdgeActivity {
  uint32_t active = 0;
};

}  // namespace

struct CallGraphBuilder::Frame {
  FunctionId fn;
  uint32_t edge = 0;
  FunctionActivity* activity = nullptr;
  FunctionActivity* parent_activity = nullptr;  // null for an outermost frame
  EdgeActivity* edge_activity = nullptr;        // null for an outermost frame
  uint64_t start_clock = 0;                     // the thread's clock at the push
  uint64_t parent_credit_at_start = 0;
  bool outermost_of_function = false;
  bool outermost_of_edge = false;
};

struct CallGraphBuilder::ThreadState {
  std::vector<Frame> stack;
  uint64_t clock = 0;  // ns of this thread's samples so far
  // Node-based maps: frames keep pointers to their entries, which rehashing does not move.
  std::unordered_map<uint32_t, FunctionActivity> functions;
  std::unordered_map<uint32_t, EdgeActivity> edges;
};

CallGraphBuilder::CallGraphBuilder() = default;
CallGraphBuilder::~CallGraphBuilder() = default;

CallGraphBuilder::ThreadState& CallGraphBuilder::state(uint64_t thread) {
  // Samples of one thread usually come in runs: skip the lookup then.
  if (last_thread_state_ && last_thread_ == thread) return *last_thread_state_;
  auto& slot = threads_[thread];
  if (!slot) slot = std::make_unique<ThreadState>();
  last_thread_ = thread;
  last_thread_state_ = slot.get();
  return *slot;
}

uint32_t CallGraphBuilder::edgeId(FunctionId parent, FunctionId child) {
  uint64_t key = (uint64_t{parent.index()} << 32) | child.index();
  auto [it, inserted] = edge_index_.try_emplace(key, static_cast<uint32_t>(edges_.size()));
  if (inserted) edges_.push_back(EdgeTotals{parent, child, 0, 0, 0});
  return it->second;
}

void CallGraphBuilder::push(ThreadState& ts, FunctionId fn) {
  if (fn.index() >= functions_.size()) functions_.resize(size_t{fn.index()} + 1);
  Frame frame;
  frame.fn = fn;
  frame.activity = &ts.functions[fn.index()];
  frame.outermost_of_function = frame.activity->active++ == 0;
  frame.start_clock = ts.clock;
  ++functions_[fn.index()].calls;
  if (!ts.stack.empty()) {
    const Frame& parent = ts.stack.back();
    frame.edge = edgeId(parent.fn, fn);
    frame.edge_activity = &ts.edges[frame.edge];
    frame.outermost_of_edge = frame.edge_activity->active++ == 0;
    frame.parent_activity = parent.activity;
    frame.parent_credit_at_start = parent.activity->credited;
    ++edges_[frame.edge].calls;
  }
  ts.stack.push_back(frame);
}

void CallGraphBuilder::pop(ThreadState& ts) {
  const Frame& frame = ts.stack.back();
  uint64_t elapsed = ts.clock - frame.start_clock;
  if (frame.outermost_of_function) functions_[frame.fn.index()].inclusive_ns += elapsed;
  --frame.activity->active;
  if (frame.edge_activity) {
    --frame.edge_activity->active;
    if (frame.outermost_of_edge) {
      // What the parent was credited while this edge was open came from recursion back into
      // the parent: it is already counted there, so here it is loop, not time.
      uint64_t gained = frame.parent_activity->credited - frame.parent_credit_at_start;
      EdgeTotals& edge = edges_[frame.edge];
      edge.loop_ns += gained;
      edge.time_ns += elapsed - gained;
      frame.parent_activity->credited += elapsed - gained;
    }
  }
  ts.stack.pop_back();
}

StackChange CallGraphBuilder::onSample(uint64_t thread, std::span<const FunctionId> stack,
                                       uint64_t ns, size_t known_same) {
  ThreadState& ts = state(thread);
  size_t limit = std::min(ts.stack.size(), stack.size());
  size_t common = std::min(known_same, limit);
  while (common < limit && ts.stack[common].fn == stack[common]) ++common;
  StackChange change{static_cast<uint32_t>(ts.stack.size() - common),
                     static_cast<uint32_t>(common)};
  while (ts.stack.size() > common) pop(ts);
  for (size_t i = common; i < stack.size(); ++i) push(ts, stack[i]);
  max_depth_ = std::max<uint32_t>(max_depth_, static_cast<uint32_t>(stack.size()));

  total_ns_ += ns;
  ts.clock += ns;
  if (!ts.stack.empty()) {
    Frame& leaf = ts.stack.back();
    functions_[leaf.fn.index()].self_ns += ns;
    leaf.activity->credited += ns;
  }
  return change;
}

void CallGraphBuilder::endThread(uint64_t thread) {
  auto it = threads_.find(thread);
  if (it == threads_.end()) return;
  while (!it->second->stack.empty()) pop(*it->second);
}

void CallGraphBuilder::finish() {
  for (auto& [tid, ts] : threads_)
    while (!ts->stack.empty()) pop(*ts);
}

}  // namespace hotline::model

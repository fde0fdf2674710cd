// texprofile's recursion-safe call-graph accumulation, independent of ELF, files and lines: it
// sees only, per thread, a stream of sampled stacks of function ids and the time each sample
// stands for. Tests drive it with hand-written streams; model::BuildProfile drives it with the
// symbolized samples of a profile.
//
// How it works. Consecutive stacks of one thread are turned into pops and pushes (the frames
// past their common prefix). A sample's time goes to the innermost function's self time.
//   - A function's inclusive time grows only when its *outermost* activation on the stack ends,
//     by the thread time that passed during it, so recursion never counts a span twice.
//   - Each parent→child edge has two accumulators, time and loop. When the edge's outermost
//     activation ends after D ns, the parent's credited sum (its self time plus the time of all
//     its edges, on this thread) has grown by G ns meanwhile, which can only happen if the
//     recursion came back into the parent; G goes to loop and D − G to time, and D − G is added
//     to the parent's credited sum. By induction every outermost edge activation adds exactly
//     its D to the credited sum, so at the end self + Σ child time = inclusive for every
//     function, also under direct and mutual recursion (see docs/report.md for an example).
//   - Calls are push events: every activation of a function and of an edge counts one.
// Each update is O(1) apart from hashing: the credited sum is kept per (thread, function) and
// every frame points at its counters. A sample costs the frames it pops and pushes, plus the
// comparison of its stack with the previous one that `known_same` spares.
//
// Not thread-safe. Threads' streams may interleave: each thread has its own stack and clock.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "model/ids.h"

namespace hotline::model {

struct FunctionTotals {
  uint64_t self_ns = 0;
  uint64_t inclusive_ns = 0;
  uint64_t calls = 0;  // activations pushed
};

struct EdgeTotals {
  FunctionId parent, child;
  uint64_t time_ns = 0;
  uint64_t loop_ns = 0;
  uint64_t calls = 0;  // activations of this edge pushed
};

// What one sample changed on its thread's stack: `popped` frames left, then the frames of the
// new stack from index `common` on were pushed.
struct StackChange {
  uint32_t popped = 0;
  uint32_t common = 0;
};

class CallGraphBuilder {
 public:
  CallGraphBuilder();
  ~CallGraphBuilder();
  CallGraphBuilder(const CallGraphBuilder&) = delete;
  CallGraphBuilder& operator=(const CallGraphBuilder&) = delete;

  // One sample of `thread`: `stack` outermost first (may be empty: the time then counts only in
  // total_ns(), callers should name it with a pseudo-function instead), standing for `ns`.
  // `known_same`: how many outer frames of `stack` the caller knows to be the functions of the
  // thread's previous stack (model::StackPath tells), which are then not compared again: with
  // it, a sample costs the frames that change, not its depth.
  StackChange onSample(uint64_t thread, std::span<const FunctionId> stack, uint64_t ns,
                       size_t known_same = 0);

  // Pops every open frame of `thread` (its end); its next sample, if any, starts afresh.
  void endThread(uint64_t thread);
  // Pops every open frame of every thread. Totals are final (and the invariants hold) only
  // after this.
  void finish();

  // Indexed by FunctionId; functions never seen have zero totals. May be shorter than the
  // caller's function table.
  const std::vector<FunctionTotals>& functions() const { return functions_; }
  // Indexed by EdgeId, in order of first push.
  const std::vector<EdgeTotals>& edges() const { return edges_; }
  uint64_t total_ns() const { return total_ns_; }
  uint32_t max_depth() const { return max_depth_; }

 private:
  struct ThreadState;
  struct Frame;
  ThreadState& state(uint64_t thread);
  void push(ThreadState& ts, FunctionId fn);
  void pop(ThreadState& ts);
  uint32_t edgeId(FunctionId parent, FunctionId child);

  std::vector<FunctionTotals> functions_;
  std::vector<EdgeTotals> edges_;
  std::unordered_map<uint64_t, uint32_t> edge_index_;  // parent << 32 | child
  std::unordered_map<uint64_t, std::unique_ptr<ThreadState>> threads_;
  ThreadState* last_thread_state_ = nullptr;
  uint64_t last_thread_ = 0;
  uint64_t total_ns_ = 0;
  uint32_t max_depth_ = 0;
};

}  // namespace hotline::model

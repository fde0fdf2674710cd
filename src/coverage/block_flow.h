// Execution counts of a function's basic blocks from the counters some of them increment: what
// enters a block leaves it, so each edge's count is an unknown, each block gives the equation
// Σ in = Σ out, and each counter Σ (block count × its increments there) = its value. Solved by
// propagation (a block with one unknown edge left), then exact elimination over the rationals
// for what propagation leaves. A count the equations do not fix stays unknown, with the most it
// can be; counts that contradict the equations mark the whole function inconsistent.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace hotline::coverage {

struct FlowGraph {
  static constexpr int kOutside = -1;  // the callers (an entry) or what follows a return (an exit)
  struct Edge {
    int from, to;  // block indices, or kOutside
  };
  struct Counter {
    uint64_t value = 0;
    std::vector<std::pair<int, uint64_t>> sites;  // (block, increments each time it runs)
  };
  int blocks = 0;
  std::vector<Edge> edges;
  std::vector<Counter> counters;
};

struct FlowCounts {
  // A loop no counter is in (a copy gcc expanded inline) can run any number of times.
  static constexpr uint64_t kUnbounded = UINT64_MAX;
  bool consistent = true;
  std::vector<std::optional<uint64_t>> exact;  // per block: its count, where determined
  std::vector<uint64_t> most;  // per block without one: the most it can be, or kUnbounded
  // Σ weight × count over the blocks given, where the equations fix it though not each count
  // (two copies of code sharing a counter: their sum is known, each alone is not).
  std::function<std::optional<uint64_t>(const std::vector<std::pair<int, uint64_t>>&)> sum;
  // The least and the most such a sum can be over every count the equations allow (a linear
  // program): far tighter than the blocks' bounds added up where blocks share a counter. None:
  // not known, use those.
  std::function<std::optional<std::pair<uint64_t, uint64_t>>(
      const std::vector<std::pair<int, uint64_t>>&)>
      range_of;
};

FlowCounts SolveFlow(const FlowGraph& graph);

}  // namespace hotline::coverage

// Knuth's cost from counts alone: when a profile has exact line counts (gcov) but no timing, the
// cost of a line is its executions × its weight (the machine instructions it compiles to, read
// from the binary), a function's explicit cost is the sum over its lines, and its implicit cost
// (with everything it calls) comes from solving the call graph as a linear system, so that
// recursion is handled (the VMS-Profile method; docs/annotate.md states the model and limits).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "format/raw_profile.h"
#include "model/profile.h"
#include "symbolize/code_map.h"

namespace hotline::model {

struct FunctionCost {
  std::string name;
  uint64_t calls = 0;        // executions, from gcov
  double explicit_cost = 0;  // instructions executed in the function itself
  bool uncounted = false;    // counted, but blocks the counters do not determine may add some
  double implicit_cost = 0;  // with its callees; one value per cycle of mutual recursion
  int cycle = -1;            // ≥ 0: a member of that cycle of mutual recursion
};

struct CostModel {
  std::vector<FunctionCost> functions;  // by decreasing implicit cost
  double total = 0;                     // Σ explicit costs
  // Explicit costs counted from the block counters (the profile's *_INSTRUCTIONS records)
  // rather than weighed; what undetermined blocks may add, or that an uncounted loop may add any.
  bool counted = false;
  uint64_t uncounted = 0;
  bool unbounded = false;
};

// Needs the profile's LINE_COUNTS and FUNCTION_COUNT records and the code map of the binary
// they came from; a function's explicit cost is its FUNCTION_INSTRUCTIONS count where the
// profile has one. `traced`: the profile's model when the program was also traced
// (-finstrument-functions): the calls between traced functions are then its exact ones, not
// estimates from the lines holding calls.
Expected<CostModel> CostsFromCounts(const format::RawProfile& raw, const symbolize::CodeMap& code,
                                    const Profile* traced = nullptr);

}  // namespace hotline::model

// The costs of a counts-only profile (exact counts, no samples), for annotate and `report -P`:
// the instructions each line and function executed, counted from a gcc build's block counters
// (docs/coverage.md) or else weighed (executions × the instructions a line compiles to), and
// each function's inclusive cost from the call graph's linear system (docs/annotate.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "base/status.h"
#include "model/costs.h"
#include "report/annotate.h"

namespace hotline::cli {

struct CountCosts {
  model::CostModel model;
  std::map<std::pair<std::string, uint32_t>, report::AnnotateOptions::LineCost> lines;
};

// Reads the profile at `path` again for its counts and the binary they came from; `profile` is
// its model, whose calls are exact where the program was also traced.
Expected<CountCosts> CostsOfCounts(const std::string& path, const model::Profile& profile);

}  // namespace hotline::cli

// `hotline diff` of two counts-only profiles of --coverage builds: the instructions each
// function and line executed, before and after. The counts are exact (docs/coverage.md), so
// there is no noise to judge: every change is real, and the rows are the changes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/raw_profile.h"

namespace hotline::analysis {

struct InstructionChange {
  std::string name;  // the function; for a line, the function whose code it is
  std::string file;
  uint32_t line = 0;  // for a line
  uint64_t base = 0, next = 0;
  bool uncounted = false;  // either side has blocks the counters do not determine here
};

struct InstructionDiff {
  uint64_t base_total = 0, new_total = 0;
  bool uncounted = false;
  std::vector<InstructionChange> functions, lines;  // by decreasing |change|; the same left out
};

// Whether a profile holds counted instructions and nothing sampled: what the comparison needs.
bool HasCountedInstructions(const format::RawProfile& raw);

InstructionDiff CompareInstructions(const format::RawProfile& base, const format::RawProfile& next);

}  // namespace hotline::analysis

// What a run leaves for comparing it with others: its totals and, per function and per line, the
// time, calls and samples. `hotline diff` compares these; the history database stores them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/schema.h"
#include "model/profile.h"

namespace hotline::analysis {

struct FunctionCost {
  std::string name;
  std::string file;    // the definition's; empty when unknown
  uint32_t line = 0;   // the definition's; 0 when unknown
  std::string module;  // the module's file name, for functions without a definition file
  uint64_t self_ns = 0, inclusive_ns = 0, calls = 0, samples = 0;
};

struct LineCost {
  std::string file;
  uint32_t line = 0;
  uint64_t self_ns = 0, inclusive_ns = 0, count = 0, samples = 0;
};

struct RunSummary {
  uint64_t total_ns = 0;
  uint64_t samples = 0;
  uint64_t period_ns = 0;
  format::ClockMode clock = format::ClockMode::kCpu;
  std::vector<FunctionCost> functions;  // those with time
  std::vector<LineCost> lines;          // those with time
};

// The functions and lines of `profile` that have time.
RunSummary Summarize(const model::Profile& profile);

// How two runs' functions are matched: by name and definition (file, line), or by the module's
// file name when there is no definition (model::FunctionKey's rule, for summaries).
std::string FunctionKey(const FunctionCost& f);

}  // namespace hotline::analysis

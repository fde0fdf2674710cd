// The annotated listing (`hotline annotate`), after Knuth's Profile: each source file with the
// numbers on the left of the code (count, time, average per execution, % of total), a header
// above each function with its explicit (self) and implicit (inclusive) cost and its calls,
// `#####` on executable lines that never ran, an index of the costly functions and files first
// and the never-executed lines last. docs/annotate.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/costs.h"
#include "model/profile.h"

namespace hotline::report {

struct AnnotateOptions {
  std::vector<std::string> sources;      // files to show (by path or path suffix); empty: all
  std::vector<std::string> source_dirs;  // where else to look for sources
  double cutoff = 2.0;                   // percent, for the index
  bool color = false;
  bool machine = false;  // one row per executable line: file, line, count, time_ns
  // Counts without timing: Knuth's costs (instructions executed) stand in for time.
  const model::CostModel* costs = nullptr;
  std::map<std::pair<std::string, uint32_t>, uint32_t> weights;  // instructions per line
};

// Prints the listing into `out`; one line per source that could not be found into `notes`.
void PrintAnnotated(const model::Profile& profile, const AnnotateOptions& options, std::string& out,
                    std::vector<std::string>& notes);

}  // namespace hotline::report

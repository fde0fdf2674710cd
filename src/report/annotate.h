// The annotated listing (`hotline annotate`), after Knuth's Profile: each source file with the
// numbers on the left of the code (line, count, self time, average per execution, %, and on a
// line that calls, its inclusive time), a header above each function with its self and
// inclusive cost and its calls, `#####` on executable lines that never ran, an index of the
// costly functions and files first and the never-executed lines last. Folded by default: only
// the functions above the cutoff, hot lines with a little context. docs/annotate.md.
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
  double cutoff = 2.0;                   // percent, for the index and the functions listed
  bool all = false;                      // whole files, nothing folded
  bool system = false;                   // system headers and libraries' sources too
  bool full_names = false;               // C++ names whole
  bool color = false;
  bool machine = false;  // one row per executable line: file, line, count, time_ns
  // Counts without timing: Knuth's costs (instructions executed) stand in for time.
  const model::CostModel* costs = nullptr;
  // Each line's cost: its instructions executed, counted (a --coverage build's block counters)
  // or weighed (executions × the instructions it compiles to); and, where counted, the most that
  // blocks the counters do not determine could add (kUnbounded: an uncounted loop).
  struct LineCost {
    double cost = 0;
    uint64_t uncounted = 0;
  };
  static constexpr uint64_t kUnbounded = UINT64_MAX;
  std::map<std::pair<std::string, uint32_t>, LineCost> line_costs;
};

// What the listing has to tell besides itself, for the CLI to print on stderr.
struct AnnotateMessages {
  std::vector<std::string> notes;     // one per source with data that could not be found
  std::vector<std::string> warnings;  // sources edited after their binary was built
  uint32_t system_files = 0;          // files with data left out as the system's
  uint32_t files_below_cutoff = 0;    // files with data but no function above the cutoff
};

// Prints the listing into `out`.
void PrintAnnotated(const model::Profile& profile, const AnnotateOptions& options, std::string& out,
                    AnnotateMessages& messages);

}  // namespace hotline::report

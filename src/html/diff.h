// `hotline html --diff BASE NEW`: a differential flame graph (docs/html.md). The frames are NEW's
// stacks merged by function path, each matched to BASE's path of the same functions (by
// model::FunctionKey: name and definition, never addresses, for the two are different builds or
// runs); a frame is as wide as NEW's time and coloured by the change of its time, new/base − 1,
// red for slower and blue for faster, once the change is beyond the sampling noise of the frame's
// sample counts. The same graph in BASE's shape shows the paths NEW no longer has. Beside it,
// `hotline diff`'s tables (analysis::Compare), so that the graph and the numbers agree.
#pragma once

#include <string>
#include <vector>

#include "analysis/diff.h"
#include "base/status.h"
#include "model/profile.h"

namespace hotline::html {

struct DiffInput {
  const model::Profile* base = nullptr;
  const model::Profile* next = nullptr;
  std::string base_path, new_path;    // shown in the page's header
  std::vector<std::string> warnings;  // what reading the profiles met
  // The confidence of the frames' noise rule (over all the frames of one graph, as Compare's is
  // over a table's rows) and of the tables' verdicts, and the tables' threshold.
  analysis::DiffOptions options;
};

// Writes the page into `dir` with WriteHtmlReport's rules (html.h). Refuses a CPU-time profile
// against an elapsed-time one, whose times do not compare.
Status WriteDiffReport(const DiffInput& input, const std::string& dir);

}  // namespace hotline::html

// `hotline history log` and the history page: one workload's runs grouped by commit, oldest
// first, and series over them (the total, a function's self or inclusive time), each with the
// commits where it changed surely beyond the threshold.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "history/runs.h"

namespace hotline::history {

struct CommitRuns {
  std::string commit;
  std::vector<const RunRecord*> runs;  // oldest first
};

// `runs` grouped by commit, oldest commit first: in the order of `ancestry` (nearest first, as
// git rev-list gives it) for the commits it holds, before them the others by their first run.
// `all` false leaves out the commits not in `ancestry` (when it is not empty).
std::vector<CommitRuns> GroupByCommit(const std::vector<RunRecord>& runs,
                                      const std::vector<std::string>& ancestry, bool all);

struct Point {
  uint32_t runs = 0;
  double mean_ns = 0, min_ns = 0, max_ns = 0, sd_ns = 0;
  std::vector<double> values;  // one per run
};

struct Step {
  size_t at = 0;      // the commit (index) from which the series changed
  double change = 0;  // new/old − 1, of the means
  double low = 0, high = 0;
};

struct Series {
  std::string name;  // "total" or the function's
  bool self = true;
  std::vector<std::optional<Point>> points;  // one per commit; none: no run has it
  std::vector<Step> steps;                   // the changes, oldest first
};

// The total (`function` empty) or a function's time, self or inclusive, per run, per commit (a
// run without the function counts 0, as it spent no time there). Steps: each commit with runs
// against the previous one with runs, both with two runs or more, by Welch's interval of the
// ratio of means at `confidence` for the whole series (Bonferroni over its comparisons), kept
// when it is surely beyond ±threshold.
Series MakeSeries(const std::vector<CommitRuns>& commits, const std::string& function, bool self,
                  double threshold, double confidence);

}  // namespace hotline::history

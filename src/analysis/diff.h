// `hotline diff`: two sets of runs compared per function (self and inclusive time) and per
// line, with how sure each change is. Functions and lines are matched by symbol, as merging
// does (model/merge.h). docs/diff.md states the statistics and their limits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/run_summary.h"

namespace hotline::analysis {

enum class Verdict {
  kNoChange,  // no change the runs can show at the chosen confidence
  kSlower,
  kFaster,
  kNew,   // only in the new runs
  kGone,  // only in the base runs
};

// "slower", "faster", "new", "gone", "no change".
const char* VerdictName(Verdict verdict);

struct DiffRow {
  std::string name;  // the function (for lines, the function the line belongs to is not known)
  std::string file;
  uint32_t line = 0;                     // the line; for functions, the definition's
  double base_ns = 0, new_ns = 0;        // mean per run
  double base_share = 0, new_share = 0;  // percent of the side's mean total
  double low = 0, high = 0;              // interval of new/base − 1, when judged
  bool judged = false;  // in both sets, large enough (DiffOptions::min_share), not [unsampled]
  Verdict verdict = Verdict::kNoChange;
};

struct DiffTable {
  std::vector<DiffRow> rows;  // by decreasing |new − base|; unchanged rows left out
  uint32_t compared = 0;      // rows in both sets, each judged at the corrected confidence
};

struct Diff {
  size_t base_runs = 0, new_runs = 0;
  double confidence = 0.95;
  double threshold = 0.05;
  double min_share = 0;
  double base_total_ns = 0, new_total_ns = 0;  // mean per run
  bool from_runs = false;  // several runs per side: intervals from the runs; else sampling only
  // The runs' totals, judged on their own at `confidence` (the figure `hotline check` grades
  // too): the program as a whole, which a change spread over many functions moves clearly.
  DiffRow total;
  DiffTable self, inclusive, lines;
};

struct DiffOptions {
  double confidence = 0.95;  // for each table as a whole: Bonferroni over its compared rows
  // A verdict of slower or faster needs the whole interval beyond ±threshold: the change is
  // surely at least that large.
  double threshold = 0.05;
  // Rows below this percent of their side's total on both sides are listed but not judged,
  // and do not widen the others' intervals: a program's thousand tiny functions would.
  double min_share = 1;
};

Diff Compare(const std::vector<const RunSummary*>& base, const std::vector<const RunSummary*>& next,
             const DiffOptions& options = {});

}  // namespace hotline::analysis

// `hotline check`: the runs of one commit against those of its baseline, each function's self
// time graded. The statistics are `hotline diff`'s (analysis/diff.h): Welch's interval of the
// ratio of means over runs, Bonferroni over the functions judged.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/run_summary.h"

namespace hotline::history {

enum class Grade {
  kNoChange,    // nothing the runs can show beyond the threshold
  kMaybe,       // surely changed, and maybe slower beyond the threshold: the runs cannot tell
  kSlower,      // surely slower by more than the threshold
  kMuchSlower,  // surely slower by more than four times the threshold
  kFaster,      // surely faster by more than the threshold
};

const char* GradeName(Grade grade);

struct CheckOptions {
  double threshold = 0.05;   // the change that matters, new/base − 1
  double confidence = 0.95;  // for all the functions judged together
  size_t min_runs = 3;       // per side: fewer decide nothing
  double min_share = 1;      // percent of the total a function needs (on either side) to be judged
};

struct CheckRow {
  std::string name, file;
  uint32_t line = 0;
  double base_ns = 0, new_ns = 0;  // mean per run
  double low = 0, high = 0;        // interval of new/base − 1
  Grade grade = Grade::kNoChange;
};

struct CheckResult {
  size_t base_runs = 0, new_runs = 0;
  double confidence = 0, threshold = 0;
  CheckRow total;              // the runs' totals, judged on their own at `confidence`
  std::vector<CheckRow> rows;  // the functions graded other than kNoChange, largest change first
  uint32_t judged = 0;         // functions judged
  // Mean CPU time per run no sample reached ([unsampled]: records a loaded machine's kernel
  // dropped, sampling paused): part of the total, never judged as a function.
  double base_unsampled_ns = 0, new_unsampled_ns = 0;
  bool Slower() const;  // a function, or the total, slower or much slower
};

// Both sides need options.min_runs runs (the caller says so when they do not).
CheckResult Check(const std::vector<const analysis::RunSummary*>& base,
                  const std::vector<const analysis::RunSummary*>& next,
                  const CheckOptions& options);

}  // namespace hotline::history

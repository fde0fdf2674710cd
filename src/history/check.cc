#include "history/check.h"

#include <algorithm>
#include <cmath>

#include "analysis/diff.h"
#include "analysis/statistics.h"
#include "model/profile.h"

namespace hotline::history {
namespace {

Grade GradeOf(double low, double high, double threshold) {
  if (low > 4 * threshold) return Grade::kMuchSlower;
  if (low > threshold) return Grade::kSlower;
  if (high < -threshold) return Grade::kFaster;
  if (low > 0 && high > threshold) return Grade::kMaybe;
  return Grade::kNoChange;
}

double MeanUnsampled(const std::vector<const analysis::RunSummary*>& runs) {
  std::vector<double> ns;
  for (const analysis::RunSummary* r : runs) {
    ns.push_back(0);
    for (const analysis::FunctionCost& f : r->functions)
      if (f.file == model::kUnsampledName) ns.back() += double(f.self_ns);
  }
  return ns.empty() ? 0 : analysis::Mean(ns);
}

}  // namespace

const char* GradeName(Grade grade) {
  switch (grade) {
    case Grade::kNoChange:
      return "no change";
    case Grade::kMaybe:
      return "maybe";
    case Grade::kSlower:
      return "slower";
    case Grade::kMuchSlower:
      return "much slower";
    case Grade::kFaster:
      return "faster";
  }
  return "?";
}

bool CheckResult::Slower() const {
  auto slower = [](const CheckRow& r) {
    return r.grade == Grade::kSlower || r.grade == Grade::kMuchSlower;
  };
  return slower(total) || std::any_of(rows.begin(), rows.end(), slower);
}

CheckResult Check(const std::vector<const analysis::RunSummary*>& base,
                  const std::vector<const analysis::RunSummary*>& next,
                  const CheckOptions& options) {
  CheckResult result;
  result.base_runs = base.size();
  result.new_runs = next.size();
  result.confidence = options.confidence;
  result.threshold = options.threshold;
  // The grades need the intervals themselves: no threshold in the comparison.
  analysis::DiffOptions diff_options;
  diff_options.confidence = options.confidence;
  diff_options.threshold = 0;
  diff_options.min_share = options.min_share;
  analysis::Diff diff = analysis::Compare(base, next, diff_options);
  result.judged = diff.self.compared;
  result.base_unsampled_ns = MeanUnsampled(base);
  result.new_unsampled_ns = MeanUnsampled(next);
  for (const analysis::DiffRow& row : diff.self.rows) {
    if (!row.judged) continue;
    Grade grade = GradeOf(row.low, row.high, options.threshold);
    if (grade == Grade::kNoChange) continue;
    result.rows.push_back(
        {row.name, row.file, row.line, row.base_ns, row.new_ns, row.low, row.high, grade});
  }
  // The total as diff judges it: graded, where diff's verdict needs the interval past the
  // threshold.
  result.total.name = "total";
  result.total.base_ns = diff.total.base_ns;
  result.total.new_ns = diff.total.new_ns;
  if (diff.from_runs && diff.total.judged) {
    result.total.low = diff.total.low;
    result.total.high = diff.total.high;
    result.total.grade = GradeOf(diff.total.low, diff.total.high, options.threshold);
  }
  return result;
}

}  // namespace hotline::history

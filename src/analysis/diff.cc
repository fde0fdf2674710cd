#include "analysis/diff.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "analysis/statistics.h"
#include "model/profile.h"

namespace hotline::analysis {
namespace {

// One function or line, its value in every run of both sides.
struct Series {
  std::string name, file;
  uint32_t line = 0;
  std::vector<double> base, next;
};

using Value = std::function<void(const RunSummary&, size_t run, bool base,
                                 std::map<std::string, Series>& series)>;

std::map<std::string, Series> Collect(const std::vector<const RunSummary*>& base,
                                      const std::vector<const RunSummary*>& next,
                                      const Value& value) {
  std::map<std::string, Series> series;
  for (size_t i = 0; i < base.size(); ++i) value(*base[i], i, true, series);
  for (size_t i = 0; i < next.size(); ++i) value(*next[i], i, false, series);
  for (auto& [key, s] : series) {
    s.base.resize(base.size(), 0.0);
    s.next.resize(next.size(), 0.0);
  }
  return series;
}

// Adds `ns` to the run's value of `key`, making the series when new.
void Add(std::map<std::string, Series>& series, const std::string& key, const std::string& name,
         const std::string& file, uint32_t line, size_t run, bool base, double ns) {
  Series& s = series[key];
  if (s.name.empty() && s.file.empty()) s.name = name, s.file = file, s.line = line;
  std::vector<double>& values = base ? s.base : s.next;
  if (values.size() <= run) values.resize(run + 1, 0.0);
  values[run] += ns;
}

// Samples of the one run per side: the time over the period.
uint64_t SampleCount(double ns, double period) {
  return std::max<uint64_t>(1, uint64_t(std::llround(ns / period)));
}

double MeanPeriod(const std::vector<const RunSummary*>& runs) {
  double sum = 0;
  for (const RunSummary* r : runs) sum += double(r->period_ns ? r->period_ns : 1);
  return sum / double(runs.size());
}

DiffTable Judge(std::map<std::string, Series> series, const Diff& d,
                const std::vector<const RunSummary*>& base,
                const std::vector<const RunSummary*>& next) {
  DiffTable table;
  // [unsampled] is CPU time no sample reached (records the kernel dropped from a full ring on a
  // loaded machine, a thread too short for a sample): a fact about the measurement, not about
  // code, so it is listed but never judged.
  auto judged = [&d](const Series& s) {
    if (s.file == model::kUnsampledName) return false;
    double base = Mean(s.base), next = Mean(s.next);
    bool large =
        100 * base >= d.min_share * d.base_total_ns || 100 * next >= d.min_share * d.new_total_ns;
    return base > 0 && next > 0 && base != next && large;
  };
  for (const auto& [key, s] : series) table.compared += judged(s);
  // Bonferroni: each row at 1 − (1 − confidence) / rows, so that the table as a whole claims
  // no change wrongly with at most 1 − confidence.
  double level = 1 - (1 - d.confidence) / std::max<uint32_t>(table.compared, 1);
  double base_period = MeanPeriod(base), next_period = MeanPeriod(next);
  for (const auto& [key, s] : series) {
    DiffRow row{s.name, s.file, s.line, Mean(s.base), Mean(s.next)};
    if (row.base_ns == row.new_ns) continue;
    row.base_share = d.base_total_ns > 0 ? 100 * row.base_ns / d.base_total_ns : 0;
    row.new_share = d.new_total_ns > 0 ? 100 * row.new_ns / d.new_total_ns : 0;
    if (row.base_ns == 0 || row.new_ns == 0) {
      row.verdict = row.base_ns == 0 ? Verdict::kNew : Verdict::kGone;
    } else if (judged(s)) {
      Interval i;
      if (d.from_runs) {
        i = RatioOfMeans(s.base, s.next, level);
      } else {
        i = PoissonRatio(SampleCount(row.base_ns, base_period), 1.0,
                         SampleCount(row.new_ns, next_period), base_period / next_period, level);
      }
      row.low = i.low;
      row.high = i.high;
      row.judged = true;
      // Surely beyond the threshold: a change too small to matter is no change, however sure.
      row.verdict = i.low > d.threshold     ? Verdict::kSlower
                    : i.high < -d.threshold ? Verdict::kFaster
                                            : Verdict::kNoChange;
    }
    table.rows.push_back(std::move(row));
  }
  std::stable_sort(table.rows.begin(), table.rows.end(), [](const DiffRow& a, const DiffRow& b) {
    return std::fabs(a.new_ns - a.base_ns) > std::fabs(b.new_ns - b.base_ns);
  });
  return table;
}

}  // namespace

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kSlower:
      return "slower";
    case Verdict::kFaster:
      return "faster";
    case Verdict::kNew:
      return "new";
    case Verdict::kGone:
      return "gone";
    case Verdict::kNoChange:
      break;
  }
  return "no change";
}

Diff Compare(const std::vector<const RunSummary*>& base, const std::vector<const RunSummary*>& next,
             const DiffOptions& options) {
  Diff d;
  d.base_runs = base.size();
  d.new_runs = next.size();
  d.confidence = options.confidence;
  d.threshold = options.threshold;
  d.min_share = options.min_share;
  d.from_runs = base.size() >= 2 && next.size() >= 2;
  for (const RunSummary* r : base) d.base_total_ns += double(r->total_ns);
  for (const RunSummary* r : next) d.new_total_ns += double(r->total_ns);
  d.base_total_ns /= double(std::max<size_t>(base.size(), 1));
  d.new_total_ns /= double(std::max<size_t>(next.size(), 1));
  if (base.empty() || next.empty()) return d;

  auto functions = [](bool inclusive) -> Value {
    return [inclusive](const RunSummary& r, size_t run, bool base,
                       std::map<std::string, Series>& series) {
      for (const FunctionCost& f : r.functions) {
        uint64_t ns = inclusive ? f.inclusive_ns : f.self_ns;
        if (ns == 0) continue;
        Add(series, FunctionKey(f), f.name, f.file, f.line, run, base, double(ns));
      }
    };
  };
  Value lines = [](const RunSummary& r, size_t run, bool base,
                   std::map<std::string, Series>& series) {
    for (const LineCost& l : r.lines) {
      if (l.self_ns == 0) continue;
      Add(series, l.file + '\0' + std::to_string(l.line), "", l.file, l.line, run, base,
          double(l.self_ns));
    }
  };
  // The total: from the runs' totals (Welch), or with one run per side from its samples.
  d.total.name = "total";
  d.total.base_ns = d.base_total_ns;
  d.total.new_ns = d.new_total_ns;
  d.total.base_share = d.total.new_share = 100;
  if (d.base_total_ns > 0 && d.new_total_ns > 0) {
    Interval i;
    if (d.from_runs) {
      std::vector<double> base_totals, new_totals;
      for (const RunSummary* r : base) base_totals.push_back(double(r->total_ns));
      for (const RunSummary* r : next) new_totals.push_back(double(r->total_ns));
      i = RatioOfMeans(base_totals, new_totals, d.confidence);
    } else {
      double base_period = MeanPeriod(base), next_period = MeanPeriod(next);
      i = PoissonRatio(SampleCount(d.base_total_ns, base_period), 1.0,
                       SampleCount(d.new_total_ns, next_period), base_period / next_period,
                       d.confidence);
    }
    d.total.low = i.low;
    d.total.high = i.high;
    d.total.judged = true;
    d.total.verdict = i.low > d.threshold     ? Verdict::kSlower
                      : i.high < -d.threshold ? Verdict::kFaster
                                              : Verdict::kNoChange;
  }
  d.self = Judge(Collect(base, next, functions(false)), d, base, next);
  d.inclusive = Judge(Collect(base, next, functions(true)), d, base, next);
  d.lines = Judge(Collect(base, next, lines), d, base, next);
  return d;
}

}  // namespace hotline::analysis

#include "history/series.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/statistics.h"

namespace hotline::history {

std::vector<CommitRuns> GroupByCommit(const std::vector<RunRecord>& runs,
                                      const std::vector<std::string>& ancestry, bool all) {
  std::map<std::string, size_t> depth;  // 0: the newest
  for (size_t i = 0; i < ancestry.size(); ++i) depth.emplace(ancestry[i], i);
  std::vector<CommitRuns> commits;
  std::map<std::string, size_t> index;
  for (const RunRecord& run : runs) {  // oldest first
    if (!all && !ancestry.empty() && !depth.count(run.commit)) continue;
    auto [at, added] = index.emplace(run.commit, commits.size());
    if (added) commits.push_back({run.commit, {}});
    commits[at->second].runs.push_back(&run);
  }
  // Commits off the ancestry first, by their first run; then the ancestry, oldest first.
  std::stable_sort(commits.begin(), commits.end(), [&](const CommitRuns& a, const CommitRuns& b) {
    auto da = depth.find(a.commit), db = depth.find(b.commit);
    bool in_a = da != depth.end(), in_b = db != depth.end();
    if (in_a != in_b) return !in_a;
    return in_a && da->second > db->second;
  });
  return commits;
}

Series MakeSeries(const std::vector<CommitRuns>& commits, const std::string& function, bool self,
                  double threshold, double confidence) {
  Series series;
  series.name = function.empty() ? "total" : function;
  series.self = self;
  for (const CommitRuns& c : commits) {
    Point p;
    for (const RunRecord* run : c.runs) {
      double ns = function.empty() ? double(run->summary.total_ns) : 0;
      if (!function.empty())
        for (const analysis::FunctionCost& f : run->summary.functions)
          if (f.name == function) ns += double(self ? f.self_ns : f.inclusive_ns);
      p.values.push_back(ns);
    }
    p.runs = static_cast<uint32_t>(p.values.size());
    if (p.values.empty() ||
        std::all_of(p.values.begin(), p.values.end(), [](double v) { return v == 0; })) {
      series.points.emplace_back();
      continue;
    }
    p.mean_ns = analysis::Mean(p.values);
    p.min_ns = *std::min_element(p.values.begin(), p.values.end());
    p.max_ns = *std::max_element(p.values.begin(), p.values.end());
    double squares = 0;
    for (double v : p.values) squares += (v - p.mean_ns) * (v - p.mean_ns);
    p.sd_ns = p.runs > 1 ? std::sqrt(squares / (p.runs - 1)) : 0;
    series.points.push_back(std::move(p));
  }
  // Consecutive commits that both have two runs or more.
  std::vector<std::pair<size_t, size_t>> pairs;
  std::optional<size_t> previous;
  for (size_t i = 0; i < series.points.size(); ++i) {
    if (!series.points[i] || series.points[i]->runs < 2) continue;
    if (previous) pairs.emplace_back(*previous, i);
    previous = i;
  }
  double level = 1 - (1 - confidence) / double(std::max<size_t>(pairs.size(), 1));
  for (auto [before, after] : pairs) {
    const Point& a = *series.points[before];
    const Point& b = *series.points[after];
    analysis::Interval i = analysis::RatioOfMeans(a.values, b.values, level);
    if (i.low > threshold || i.high < -threshold)
      series.steps.push_back({after, b.mean_ns / a.mean_ns - 1, i.low, i.high});
  }
  return series;
}

}  // namespace hotline::history

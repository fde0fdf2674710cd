// -T: the N lines with the most time, each with its function.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "report/report.h"
#include "report/text.h"

namespace hotline::report {

void PrintTopLines(const model::Profile& p, const ReportOptions& options, std::string& out) {
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < p.lines.size(); ++i)
    if (p.lines[i].time_ns > 0 && p.percentOfTotal(p.lines[i].time_ns) >= options.otherCutoff())
      order.push_back(i);
  // Ties keep the lines' (file, line) order, so the table is the same on every run.
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return p.lines[a].time_ns > p.lines[b].time_ns; });
  if (order.size() > options.top_count) order.resize(options.top_count);

  // Each line's function: the one whose code at that line took the most of its time (a line of
  // an inlined function is in each function it was inlined into).
  std::vector<model::FunctionId> function_of(p.lines.size());
  std::vector<uint64_t> best(p.lines.size(), 0);
  for (const model::FunctionLine& fl : p.function_lines) {
    uint32_t line = fl.line.index();
    uint64_t cost = std::max(fl.self_ns, uint64_t{1});  // a line of callers only: any function
    if (!function_of[line].valid() || cost > best[line]) {
      function_of[line] = fl.function;
      best[line] = cost;
    }
  }

  TableWriter w(p, options, out);
  w.title("top", fmt::format("Top {} lines ({} counts; {})", options.top_count,
                             p.summary.exact_line_counts ? "exact" : "estimated", SampledClock(p)));
  w.header({"file", "line", "percent", "time", "count", "average", "function", "file name"});
  for (uint32_t i : order) {
    const model::Line& l = p.lines[i];
    uint64_t average = l.count ? l.time_ns / l.count : 0;
    std::string function =
        function_of[i].valid() ? FunctionLabel(p, function_of[i], options) : std::string("-");
    w.row({FileNumber(l.file), fmt::format("{}", l.line),
           FormatPercent(p.percentOfTotal(l.time_ns)), FormatTime(l.time_ns, w.machine()),
           FormatCount(l.count, p.summary.exact_line_counts, w.machine()),
           FormatAverage(average, p.summary.exact_line_counts, w.machine()), function,
           p.file(l.file).path});
  }
}

}  // namespace hotline::report

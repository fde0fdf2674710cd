// -L: every line above the cutoff, grouped by file (files by time, lines in file order).
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "report/report.h"
#include "report/text.h"

namespace hotline::report {

void PrintLines(const model::Profile& p, const ReportOptions& options, std::string& out) {
  const double cutoff = options.mainCutoff();
  // The profile keeps lines sorted by (file, line): each file's lines are one run.
  std::vector<std::pair<size_t, size_t>> runs(p.files.size(), {0, 0});
  for (size_t i = 0; i < p.lines.size(); ++i) {
    auto& run = runs[p.lines[i].file.index()];
    if (run.second == 0) run.first = i;
    run.second = i + 1;
  }
  std::vector<uint32_t> files;
  for (uint32_t f = 0; f < p.files.size(); ++f)
    if (p.files[f].time_ns > 0) files.push_back(f);
  std::stable_sort(files.begin(), files.end(),
                   [&](uint32_t a, uint32_t b) { return p.files[a].time_ns > p.files[b].time_ns; });

  TableWriter w(p, options, out);
  w.title("lines",
          fmt::format("Lines ({} counts; {})", p.summary.exact_line_counts ? "exact" : "estimated",
                      SampledClock(p)));
  // Several runs: each row's least and greatest run.
  bool several = p.summary.runs > 1;
  std::vector<std::string> header = {"file",  "line",    "percent",  "time",
                                     "count", "average", "file name"};
  if (several) AddSpreadCells(header, {"spread"}, w.machine());
  w.header(Cells(header));
  for (uint32_t f : files) {
    bool any = false;
    for (size_t i = runs[f].first; i < runs[f].second; ++i) {
      const model::Line& l = p.lines[i];
      double percent = p.percentOfTotal(l.time_ns);
      if (l.time_ns == 0 || percent < cutoff) continue;
      if (!any && !w.machine())
        out += fmt::format("{}: {}\n", FileNumber(model::FileId(f)), p.files[f].path);
      any = true;
      uint64_t average = l.count ? l.time_ns / l.count : 0;
      std::vector<std::string> row = {
          FileNumber(l.file),
          fmt::format("{}", l.line),
          FormatPercent(percent),
          FormatTime(l.time_ns, w.machine()),
          FormatCount(l.count, p.summary.exact_line_counts, w.machine()),
          FormatAverage(average, p.summary.exact_line_counts, w.machine()),
          p.files[f].path};
      if (several) AddSpreadCells(row, {FormatSpread(l.spread, w.machine())}, w.machine());
      w.row(Cells(row));
    }
  }
}

}  // namespace hotline::report

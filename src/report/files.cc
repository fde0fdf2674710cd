// -F: files by time.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "report/report.h"
#include "report/text.h"

namespace hotline::report {

void PrintFiles(const model::Profile& p, const ReportOptions& options, std::string& out) {
  std::vector<uint32_t> order;
  for (uint32_t f = 0; f < p.files.size(); ++f)
    if (p.files[f].time_ns > 0 && p.percentOfTotal(p.files[f].time_ns) >= options.mainCutoff())
      order.push_back(f);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return p.files[a].time_ns > p.files[b].time_ns; });

  TableWriter w(p, options, out);
  w.title("files", "Files (" + SampledClock(p) + ")");
  // Several runs: each row's least and greatest run.
  bool runs = p.summary.runs > 1;
  std::vector<std::string> header = {"file", "percent", "time", "count", "lines", "file name"};
  if (runs) AddSpreadCells(header, {"spread"}, w.machine());
  w.header(Cells(header));
  for (uint32_t f : order) {
    const model::File& file = p.files[f];
    std::vector<std::string> row = {
        FileNumber(model::FileId(f)),          FormatPercent(p.percentOfTotal(file.time_ns)),
        FormatTime(file.time_ns, w.machine()), fmt::format("{}", file.count),
        fmt::format("{}", file.lines_hit),     file.path};
    if (runs) AddSpreadCells(row, {FormatSpread(file.spread, w.machine())}, w.machine());
    w.row(Cells(row));
  }
}

}  // namespace hotline::report

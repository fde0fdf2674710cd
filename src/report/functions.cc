// -M: the function index: every function with calls, self and cumulative (inclusive) time, the
// costliest first (by definition site with -i).
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "report/report.h"
#include "report/text.h"

namespace hotline::report {

void PrintFunctions(const model::Profile& p, const ReportOptions& options, std::string& out) {
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < p.functions.size(); ++i) {
    const model::Function& f = p.functions[i];
    // A traced function is listed for its exact calls even when no sample landed in it.
    if (f.inclusive_ns == 0 && f.self_ns == 0 && !f.calls_exact && f.calls == 0) continue;
    if (!f.calls_exact && p.percentOfTotal(f.inclusive_ns) < options.otherCutoff()) continue;
    order.push_back(i);
  }
  // The costliest first (cumulative time, self time, calls), which answers "which function is
  // hot?" in a table of thousands of rows (a LaTeX document's macros); with -i, by file number
  // (unknown files last), line, then name, as texprofile's index is.
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const model::Function& fa = p.functions[a];
    const model::Function& fb = p.functions[b];
    if (!options.definitions) {
      if (fa.inclusive_ns != fb.inclusive_ns) return fa.inclusive_ns > fb.inclusive_ns;
      if (fa.self_ns != fb.self_ns) return fa.self_ns > fb.self_ns;
      if (fa.calls != fb.calls) return fa.calls > fb.calls;
    }
    if (fa.file != fb.file) return fa.file < fb.file;  // an invalid id is the largest
    if (fa.line != fb.line) return fa.line < fb.line;
    return fa.name < fb.name;
  });

  TableWriter w(p, options, out);
  w.title("functions", "Functions (" + SampledClock(p) + ")");
  // Several runs: each row's least and greatest run, of self and of cumulative time.
  bool runs = p.summary.runs > 1;
  std::vector<std::string> header = {"file", "line", "calls", "self", "cumulative", "name"};
  if (runs) AddSpreadCells(header, {"self spread", "cumulative spread"}, w.machine());
  w.header(Cells(header));
  for (uint32_t i : order) {
    const model::Function& f = p.functions[i];
    std::vector<std::string> row = {FileNumber(f.file),
                                    fmt::format("{}", f.line),
                                    FormatCount(f.calls, f.calls_exact, w.machine()),
                                    FormatTime(f.self_ns, w.machine()),
                                    FormatTime(f.inclusive_ns, w.machine()),
                                    FunctionLabel(p, model::FunctionId(i), options)};
    if (runs)
      AddSpreadCells(
          row, {FormatSpread(f.spread, w.machine()), FormatSpread(f.inclusive_spread, w.machine())},
          w.machine());
    w.row(Cells(row));
  }
}

}  // namespace hotline::report

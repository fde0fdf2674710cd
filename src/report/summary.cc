// The summary: printed last, unless -N or -m.
#include <fmt/format.h>

#include "report/report.h"
#include "report/text.h"

namespace hotline::report {

void PrintSummary(const model::Profile& p, const ReportOptions& options, std::string& out) {
  if (options.machine || options.no_summary) return;
  const model::Summary& s = p.summary;
  TableWriter w(p, options, out);
  w.title("Summary");
  auto row = [&](std::string_view key, const std::string& value) { w.row({key, value}); };
  auto countWithShare = [&](uint64_t n) {
    return s.samples
               ? fmt::format(
                     "{} ({}%)", n,
                     FormatPercent(100.0 * static_cast<double>(n) / static_cast<double>(s.samples)))
               : fmt::format("{}", n);
  };
  if (!s.exe.empty()) row("program", s.exe);
  row("total time", FormatTime(s.total_ns, false));
  row("samples", fmt::format("{}", s.samples));
  row("average per sample", FormatTime(s.samples ? s.total_ns / s.samples : 0, false));
  row("files", fmt::format("{}", s.files));
  row("functions", fmt::format("{}", s.functions));
  row("threads", fmt::format("{}", p.threads.size()));
  row("maximum stack depth", fmt::format("{}", s.max_depth));
  row("line counts", s.exact_line_counts ? "exact (gcov)" : "estimated from samples");
  row("calls", s.traced              ? "exact (-finstrument-functions)"
               : s.exact_line_counts ? "exact for functions gcov counted"
                                     : "estimated from samples");
  if (s.traced) row("maximum call depth", fmt::format("{}", s.max_call_depth));
  row("broken stacks", countWithShare(s.broken_samples));
  row("truncated stacks", countWithShare(s.truncated_samples));
  row("samples in the profiler", countWithShare(s.profiler_samples));
  row("samples outside any module", countWithShare(s.unknown_samples));
  if (!p.marks.empty()) row("marks", fmt::format("{}", p.marks.size()));
  for (const std::string& reason : p.disabled_reasons) row("runtime switched off", reason);
}

}  // namespace hotline::report

#include "report/diff.h"

#include <fmt/format.h>

#include <cmath>
#include <span>
#include <string_view>
#include <vector>

#include "report/names.h"
#include "report/text.h"

namespace hotline::report {
namespace {

std::string Signed(double ns) {
  std::string magnitude = FormatTime(static_cast<uint64_t>(std::llround(std::fabs(ns))), false);
  return (ns < 0 ? "-" : "+") + magnitude;
}

// The verdict, "-" for none.
const char* VerdictWord(analysis::Verdict v) {
  return v == analysis::Verdict::kNoChange ? "-" : analysis::VerdictName(v);
}

std::string RowName(const analysis::DiffRow& row, const ReportOptions& options) {
  if (row.name.empty())  // a line; a pseudo-entry's has no number
    return row.line ? fmt::format("{}:{}", row.file, row.line) : row.file;
  return options.full_names || options.machine ? row.name : ShortName(row.name, false);
}

void PrintTable(const analysis::Diff& d, const analysis::DiffTable& table, std::string_view id,
                std::string_view what, const ReportOptions& options, std::string& out) {
  if (table.rows.empty()) return;
  TableWriter w(options, out);
  w.title(id, fmt::format("{}: base ({} run{}) → new ({} run{}), mean per run; {} changes judged "
                          "at {:g}% for the table as a whole",
                          what, d.base_runs, d.base_runs == 1 ? "" : "s", d.new_runs,
                          d.new_runs == 1 ? "" : "s", table.compared, 100 * d.confidence));
  w.header({"base", "new", "change", "change %", "interval", "share before", "share after",
            "verdict", "name"});
  uint32_t shown = 0;
  for (const analysis::DiffRow& row : table.rows) {
    if (shown++ == options.top_count) break;
    double relative = row.base_ns > 0 ? row.new_ns / row.base_ns - 1 : 0;
    if (options.machine) {
      w.row({fmt::format("{:.0f}", row.base_ns), fmt::format("{:.0f}", row.new_ns),
             fmt::format("{:.0f}", row.new_ns - row.base_ns),
             row.base_ns > 0 ? fmt::format("{:.6f}", relative) : "",
             row.judged ? fmt::format("{:.6f}", row.low) : "",
             row.judged ? fmt::format("{:.6f}", row.high) : "",
             fmt::format("{:.4f}", row.base_share), fmt::format("{:.4f}", row.new_share),
             VerdictWord(row.verdict), RowName(row, options)});
      continue;
    }
    w.row({FormatTime(static_cast<uint64_t>(std::llround(row.base_ns)), false),
           FormatTime(static_cast<uint64_t>(std::llround(row.new_ns)), false),
           Signed(row.new_ns - row.base_ns), row.base_ns > 0 ? FormatChange(relative) : "",
           row.judged ? FormatChange(row.low) + " … " + FormatChange(row.high) : "",
           FormatPercent(row.base_share), FormatPercent(row.new_share), VerdictWord(row.verdict),
           RowName(row, options)});
  }
}

std::string SignedCount(uint64_t base, uint64_t next) {
  return next >= base ? fmt::format("+{}", next - base) : fmt::format("-{}", base - next);
}

std::string Relative(uint64_t base, uint64_t next, bool machine) {
  if (base == 0) return "";
  double r = double(next) / double(base) - 1;
  return machine ? fmt::format("{:.6f}", r) : FormatChange(r);
}

void PrintInstructionTable(const std::vector<analysis::InstructionChange>& rows,
                           std::string_view id, std::string_view what, bool lines,
                           const ReportOptions& options, std::string& out) {
  if (rows.empty()) return;
  TableWriter w(options, out);
  w.title(id, what);
  // Machine-readable: whether undetermined blocks may add to the row is a column of its own.
  if (options.machine)
    w.header({"base", "new", "change", "change %", "uncounted", "name"});
  else
    w.header({"base", "new", "change", "change %", "name"});
  uint32_t shown = 0;
  for (const analysis::InstructionChange& c : rows) {
    if (shown++ == options.top_count) break;
    std::string name = options.full_names || options.machine ? c.name : ShortName(c.name, false);
    if (lines) name = fmt::format("{}:{} ({})", c.file, c.line, name);
    std::vector<std::string> cells = {fmt::format("{}", c.base), fmt::format("{}", c.next),
                                      SignedCount(c.base, c.next),
                                      Relative(c.base, c.next, options.machine)};
    if (options.machine)
      cells.push_back(c.uncounted ? "1" : "0");
    else if (c.uncounted)
      name += " +";
    cells.push_back(name);
    std::vector<std::string_view> views(cells.begin(), cells.end());
    w.row(std::span<const std::string_view>(views));
  }
}

}  // namespace

void PrintInstructionDiff(const analysis::InstructionDiff& d, const ReportOptions& options,
                          std::string& out) {
  if (!options.machine) {
    out += fmt::format(
        "Total: {} → {} instructions ({}, {}); counted exactly from the block counters, so "
        "every change below is real{}\n",
        d.base_total, d.new_total, SignedCount(d.base_total, d.new_total),
        Relative(d.base_total, d.new_total, false),
        d.uncounted ? " (+: blocks the counters do not determine may add to a row)" : "");
    if (d.functions.empty() && d.lines.empty())
      out += "No change: every function and line executed as many instructions.\n";
  } else {
    analysis::InstructionChange total;
    total.name = "[total]";
    total.base = d.base_total;
    total.next = d.new_total;
    PrintInstructionTable({total}, "total", "Total", false, options, out);
  }
  PrintInstructionTable(d.functions, "self", "Functions by instructions executed", false, options,
                        out);
  PrintInstructionTable(d.lines, "lines", "Lines by instructions executed", true, options, out);
}

void PrintDiff(const analysis::Diff& d, const ReportOptions& options, std::string& out) {
  if (d.self.rows.empty() && d.inclusive.rows.empty() && d.lines.rows.empty()) {
    if (!options.machine) out += "No change: both sides spent the same time in every function.\n";
    return;
  }
  if (options.machine) {
    analysis::DiffTable total;
    total.rows.push_back(d.total);
    PrintTable(d, total, "total", "Total", options, out);
  } else {
    // The program as a whole, judged on its own at the confidence (as `hotline check` does).
    const analysis::DiffRow& t = d.total;
    double relative = t.base_ns > 0 ? t.new_ns / t.base_ns - 1 : 0;
    out += fmt::format("Total: {} → {} ({}, {}{}), mean per run of {} against {}{}\n",
                       FormatTime(static_cast<uint64_t>(std::llround(t.base_ns)), false),
                       FormatTime(static_cast<uint64_t>(std::llround(t.new_ns)), false),
                       Signed(t.new_ns - t.base_ns), FormatChange(relative),
                       t.judged ? fmt::format(", {:g}% interval {} … {}", 100 * d.confidence,
                                              FormatChange(t.low), FormatChange(t.high))
                                : "",
                       d.new_runs, d.base_runs,
                       t.judged ? fmt::format(": {}", t.verdict == analysis::Verdict::kNoChange
                                                          ? fmt::format("no change beyond ±{:g}%",
                                                                        100 * d.threshold)
                                                          : analysis::VerdictName(t.verdict))
                                : "");
    out += d.from_runs
               ? "Intervals: from the runs' spread (Welch's t), each table's rows corrected "
                 "together (Bonferroni).\n"
               : "Intervals: one run per side, so only the sampling noise is judged, not how "
                 "much runs vary;\nrecord several runs per side (hotline diff A1 A2 A3 -- B1 B2 "
                 "B3) for verdicts that hold.\n";
  }
  PrintTable(d, d.self, "self", "Functions by self time", options, out);
  PrintTable(d, d.inclusive, "inclusive", "Functions by inclusive time", options, out);
  PrintTable(d, d.lines, "lines", "Lines by time", options, out);
}

}  // namespace hotline::report

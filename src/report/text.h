// Formatting shared by the tables: scaled times, percentages, function labels, and a writer that
// drops titles and headers in machine mode. Internal to the report library.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/profile.h"
#include "report/report.h"

namespace hotline::report {

// "850ns", "12.34us", "5.00ms", "1.25s"; with machine, the integer nanoseconds.
std::string FormatTime(uint64_t ns, bool machine);
// A row's spread over the runs a profile adds up (Summary::runs > 1): its least and greatest
// run, "1.20ms–1.52ms"; with machine, "1200000-1520000" (nanoseconds).
std::string FormatSpread(const model::RunSpread& spread, bool machine);
// Adds the spread cells to a row (or header) of a table whose last cell is the name: before the
// name for people; after it with -m, so that the columns scripts read keep their places.
void AddSpreadCells(std::vector<std::string>& cells, const std::vector<std::string>& spreads,
                    bool machine);
// The cells of a row as the table writer takes them.
std::vector<std::string_view> Cells(const std::vector<std::string>& cells);
// Two decimals, no sign.
std::string FormatPercent(double percent);
// A relative change (new/old − 1) as a signed percent with one decimal: "+20.3%"; beyond
// tenfold, where few runs' intervals go and the digits say nothing more, ">+999%".
std::string FormatChange(double fraction);
// What the sampled times measure, for table titles: "CPU time, sampled" or "elapsed time,
// sampled" (--clock wall). Timed tracing's per-call times are elapsed time: -P says so itself.
std::string SampledClock(const model::Profile& p);
// The function's name, with " [file:line]" of its definition under -i (real functions only).
std::string FunctionLabel(const model::Profile& profile, model::FunctionId id,
                          const ReportOptions& options);
// A count, or an average per call, that comes from samples is an estimate, and says so to
// people: "~12", "~1.25ms". Exact ones (gcov's, the tracer's) and -m's stay bare.
std::string FormatCount(uint64_t count, bool exact, bool machine);
std::string FormatAverage(uint64_t ns, bool exact, bool machine);
// Terminal colours for a share of the total: hot red, warm yellow, some green; "" for none.
const char* HeatColor(double percent);
inline constexpr const char* kColorReset = "\x1b[0m";
// The number of a file in every table: its FileId + 1; 0 when unknown.
std::string FileNumber(model::FileId file);

// Writes one table. For people, the rows are held until flush() (or the end of the writer) and
// padded to the columns' widths: columns of numbers right-aligned, others left, the last (the
// names) as it is; a "percent" header reads "%". With -m the rows are TAB-separated as they
// come, and when several tables are printed each begins with a line naming it ("# graph").
class TableWriter {
 public:
  TableWriter(const model::Profile& profile, const ReportOptions& options, std::string& out);
  TableWriter(const ReportOptions& options, std::string& out) : options_(options), out_(out) {}
  ~TableWriter();
  TableWriter(const TableWriter&) = delete;
  TableWriter& operator=(const TableWriter&) = delete;

  // The table's title, preceded by a blank line unless it is the first output; `id` names the
  // table for -m.
  void title(std::string_view id, std::string_view text);
  // A header row (human mode only).
  void header(std::initializer_list<std::string_view> columns);
  void header(std::span<const std::string_view> columns);  // as many columns as a table needs
  // A data row; with -m and a one-thread profile, the thread id comes first.
  void row(std::initializer_list<std::string_view> columns);
  void row(std::span<const std::string_view> columns);
  void blank();
  // A line of text under the rows, not aligned with them (human mode only).
  void note(std::string_view text);
  // Writes the rows held so far, aligned among themselves.
  void flush();
  bool machine() const { return options_.machine; }

 private:
  enum class Kind { kTitle, kHeader, kRow, kBlank, kNote };
  struct Line {
    Kind kind;
    std::vector<std::string> cells;
  };
  const ReportOptions& options_;
  std::string& out_;
  std::string prefix_;
  std::vector<Line> pending_;
};

}  // namespace hotline::report

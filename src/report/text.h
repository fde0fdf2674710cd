// Formatting shared by the tables: scaled times, percentages, function labels, and a writer that
// drops titles and headers in machine mode. Internal to the report library.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "model/profile.h"
#include "report/report.h"

namespace hotline::report {

// "850ns", "12.34us", "5.00ms", "1.25s"; with machine, the integer nanoseconds.
std::string FormatTime(uint64_t ns, bool machine);
// Two decimals, no sign.
std::string FormatPercent(double percent);
// What the sampled times measure, for table titles: "CPU time, sampled" or "elapsed time,
// sampled" (--clock wall). Timed tracing's per-call times are elapsed time: -P says so itself.
std::string SampledClock(const model::Profile& p);
// The function's name, with " [file:line]" of its definition under -i (real functions only).
std::string FunctionLabel(const model::Profile& profile, model::FunctionId id,
                          const ReportOptions& options);
// The number of a file in every table: its FileId + 1; 0 when unknown.
std::string FileNumber(model::FileId file);

class TableWriter {
 public:
  TableWriter(const model::Profile& profile, const ReportOptions& options, std::string& out);

  // A title line (human mode only), preceded by a blank line unless it is the first output.
  void title(std::string_view text);
  // A header row (human mode only).
  void header(std::initializer_list<std::string_view> columns);
  // A data row; with -m and a one-thread profile, the thread id comes first.
  void row(std::initializer_list<std::string_view> columns);
  void blank();
  bool machine() const { return options_.machine; }

 private:
  void columns(std::initializer_list<std::string_view> columns);
  const ReportOptions& options_;
  std::string& out_;
  std::string prefix_;
};

}  // namespace hotline::report

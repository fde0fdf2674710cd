// texprofile's tables for a model::Profile. Every function here only selects, sorts and prints:
// the numbers come from the Profile (DESIGN.md rule 3). Columns are separated by TABs; times
// auto-scale (ns, us, ms, s) unless `machine` asks for integer nanoseconds; percentages have two
// decimals. docs/report.md describes every table and column.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/costs.h"
#include "model/profile.h"

namespace hotline::report {

// Which tables to print and how. Tables always print in one fixed order (top lines, call graph,
// files, lines, flat, functions, procedures, raw samples, summary), whatever the order of the
// flags.
struct ReportOptions {
  bool top = false;            // -T
  uint32_t top_count = 10;     // -tN
  bool graph = false;          // -G
  bool files = false;          // -F
  bool lines = false;          // -L
  bool flat = false;           // -C
  uint32_t flat_limit = 0;     // the report without table flags: -C's first N rows (0: all)
  bool functions = false;      // -M
  bool procedures = false;     // -P
  bool sampled_times = false;  // --sampled-times: -P shows sampled times for a timed trace too
  bool raw = false;            // -R
  bool stack_changes = false;  // -s (with -R; alone it implies -R)
  bool definitions = false;    // -i: " [file:line]" after every function name
  bool machine = false;        // -m: no titles or headers, integer ns, no summary
  bool no_summary = false;     // -N
  bool name_tables = false;    // -m with several tables: each begins with "# NAME"
  bool color = false;          // heat colours in the percent columns (a terminal)
  bool full_names = false;     // --full-names: C++ names whole, parameters and templates
  uint32_t width = 0;          // --width: rows cut to this many characters (0: never)
  std::string profile_path;    // the file read, the summary's first row (none when empty)
  // The names the tables show, by FunctionId (set by PrintReport; the full names when empty).
  std::shared_ptr<const std::vector<std::string>> names;
  // -P of a counts-only profile: the instructions executed instead of time (SOKRAT's costs).
  const model::CostModel* costs = nullptr;
  // -pN: rows below N percent are left out. Unset: 1 for -F, -L and -G, 0 for the others.
  std::optional<double> cutoff;

  // The cutoff in force for the files, lines and call-graph tables, and for the others.
  double mainCutoff() const { return cutoff.value_or(1.0); }
  double otherCutoff() const { return cutoff.value_or(0.0); }
  // -A: the usual set.
  void selectAll() { top = graph = files = flat = true; }
};

void PrintTopLines(const model::Profile& profile, const ReportOptions& options, std::string& out);
void PrintCallGraph(const model::Profile& profile, const ReportOptions& options, std::string& out);
void PrintFiles(const model::Profile& profile, const ReportOptions& options, std::string& out);
void PrintLines(const model::Profile& profile, const ReportOptions& options, std::string& out);
void PrintFlat(const model::Profile& profile, const ReportOptions& options, std::string& out);
void PrintFunctions(const model::Profile& profile, const ReportOptions& options, std::string& out);
void PrintProcedures(const model::Profile& profile, const ReportOptions& options, std::string& out);
void PrintRaw(const model::Profile& profile, const ReportOptions& options, std::string& out);
void PrintSummary(const model::Profile& profile, const ReportOptions& options, std::string& out);
// How the run ended, for people: "exit code 0", "killed by SIGSEGV", or that the END record is
// missing (the run was killed by SIGKILL or died unfinished) and what may be lost.
std::string DescribeEnding(const model::Profile& profile);
// Which sampler recorded the profile, in a few words.
std::string SamplerName(format::Sampler sampler);

// Every table the options ask for, in the fixed order; for a profile restricted to one thread,
// under a title naming it (or, with -m, with the thread id as first column of every row).
void PrintReport(const model::Profile& profile, const ReportOptions& options, std::string& out);

}  // namespace hotline::report

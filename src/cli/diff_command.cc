// `hotline diff BASE NEW` and `hotline diff BASE... -- NEW...`: what got slower or faster, and
// how sure that is (docs/diff.md); of two counts-only profiles, the instructions each function
// and line executed, which are exact.
#include <fmt/core.h>

#include <memory>
#include <string>
#include <vector>

#include "analysis/diff.h"
#include "analysis/instruction_diff.h"
#include "cli/commands.h"
#include "cli/load_profile.h"
#include "format/raw_profile.h"
#include "report/diff.h"

namespace hotline::cli {
namespace {

struct DiffCommandOptions {
  std::vector<std::string> base;  // before `--`: the base runs (or BASE NEW without `--`)
  std::vector<std::string> next;  // after `--`, which RunCli turns into --new
  analysis::DiffOptions diff;
  report::ReportOptions report;
  double threshold = 5;

  void Register(CLI::App& cmd) {
    cmd.add_option("-c,--confidence", diff.confidence,
                   "how sure a verdict must be, for each table as a whole (default 0.95)")
        ->check(CLI::Range(0.5, 0.9999));
    cmd.add_option("--threshold", threshold,
                   "a verdict needs the change surely beyond this percent (default 5)")
        ->check(CLI::Range(0.0, 1000.0));
    cmd.add_option("--min-share", diff.min_share,
                   "percent of the total a function or line needs to be judged (default 1)")
        ->check(CLI::Range(0.0, 100.0));
    cmd.add_option("-t,--top-count", report.top_count,
                   "rows per table, largest changes first (default 10)")
        ->check(Positive());
    cmd.add_flag("-m,--machine", report.machine,
                 "TAB-separated: base_ns, new_ns, change_ns, relative change, interval low and "
                 "high, shares before and after, verdict, name; each table after a # line");
    cmd.add_flag("--full-names", report.full_names, "C++ names whole");
    cmd.add_option("--new", next)->group("");  // what follows `--`
    cmd.add_option("BASE NEW", base,
                   "a base profile and a new one; or several base runs, `--`, several new runs");
  }
};

int RunDiff(DiffCommandOptions& o) {
  if (o.next.empty()) {
    if (o.base.size() != 2) {
      fmt::print(stderr,
                 "hotline: diff: give BASE and NEW, or several runs each: BASE1 BASE2 ... -- "
                 "NEW1 NEW2 ...\n");
      return 2;
    }
    o.next.push_back(o.base.back());
    o.base.pop_back();
  }
  if (o.base.empty()) {
    fmt::print(stderr, "hotline: diff: no base runs before --\n");
    return 2;
  }
  o.report.name_tables = o.report.machine;
  o.diff.threshold = o.threshold / 100;
  // Two counts-only profiles of --coverage builds: their instructions executed, exact.
  if (o.base.size() == 1 && o.next.size() == 1) {
    format::ReadStats base_stats, new_stats;
    Expected<format::RawProfile> base = format::LoadRawProfile(o.base[0], &base_stats);
    Expected<format::RawProfile> next = format::LoadRawProfile(o.next[0], &new_stats);
    if (base && next && analysis::HasCountedInstructions(*base) &&
        analysis::HasCountedInstructions(*next)) {
      std::string out;
      report::PrintInstructionDiff(analysis::CompareInstructions(*base, *next), o.report, out);
      fmt::print("{}", out);
      return 0;
    }
  }
  symbolize::Symbolizer symbolizer;
  model::SymbolizerResolver resolver(symbolizer);
  // A merged file's runs are runs: each is one draw of the program's time.
  Expected<std::vector<model::Profile>> base = LoadEveryRun(o.base, resolver, {});
  if (!base) {
    fmt::print(stderr, "hotline: {}\n", base.status().message());
    return 1;
  }
  Expected<std::vector<model::Profile>> next = LoadEveryRun(o.next, resolver, {});
  if (!next) {
    fmt::print(stderr, "hotline: {}\n", next.status().message());
    return 1;
  }
  std::vector<analysis::RunSummary> summaries;
  summaries.reserve(base->size() + next->size());
  for (const model::Profile& p : *base) summaries.push_back(analysis::Summarize(p));
  for (const model::Profile& p : *next) summaries.push_back(analysis::Summarize(p));
  std::vector<const analysis::RunSummary*> base_runs, new_runs;
  for (size_t i = 0; i < summaries.size(); ++i)
    (i < base->size() ? base_runs : new_runs).push_back(&summaries[i]);
  for (const analysis::RunSummary* r : new_runs)
    if (r->clock != base_runs.front()->clock) {
      fmt::print(stderr,
                 "hotline: diff: CPU time and elapsed time (--clock wall) do not compare\n");
      return 1;
    }
  analysis::Diff diff = analysis::Compare(base_runs, new_runs, o.diff);
  std::string out;
  report::PrintDiff(diff, o.report, out);
  fmt::print("{}", out);
  return 0;
}

}  // namespace

void RegisterDiffCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<DiffCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "diff", "what got slower or faster between runs, per function and line, and how sure");
  options->Register(*cmd);
  cmd->callback([options, exit_code] { *exit_code = RunDiff(*options); });
}

}  // namespace hotline::cli

// `hotline check`: is this commit slower than its baseline? For CI and `git bisect run`: exit 0
// when no function is slower beyond the threshold, 1 when one is, 2 when it cannot tell
// (docs/history.md).
#include <fmt/core.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/history_location.h"
#include "history/git.h"
#include "history/open.h"
#include "history/check.h"
#include "report/history.h"

namespace hotline::cli {
namespace {

struct CheckCommandOptions {
  HistoryLocation where;
  std::string workload;
  std::string revision = "HEAD";
  std::string baseline;
  double threshold = 5;
  history::CheckOptions check;
  std::string format = "text";
  report::ReportOptions report;

  void Register(CLI::App& cmd) {
    where.Register(cmd);
    cmd.add_option("-w,--workload", workload, "the workload (default: the database's only one)");
    cmd.add_option("--rev", revision, "the commit to check (default HEAD)");
    cmd.add_option("--baseline", baseline,
                   "the commit to compare with (default: the nearest ancestor with runs of the "
                   "workload)");
    cmd.add_option("--threshold", threshold,
                   "slower means surely slower by more than this percent (default 5)")
        ->check(CLI::Range(0.0, 1000.0));
    cmd.add_option("-c,--confidence", check.confidence,
                   "how sure, for all the functions judged together (default 0.95)")
        ->check(CLI::Range(0.5, 0.9999));
    cmd.add_option("--min-runs", check.min_runs, "runs each side needs (default 3, at least 2)")
        ->check(CLI::Range(2, 1000));
    cmd.add_option("--min-share", check.min_share,
                   "percent of the total a function needs to be judged (default 1)")
        ->check(CLI::Range(0.0, 100.0));
    cmd.add_option("--format", format, "text or markdown (a pull-request comment)")
        ->check(CLI::IsMember({"text", "markdown"}));
    cmd.add_flag("-m,--machine", report.machine,
                 "TAB-separated: grade, change, interval low and high, before and after (ns), "
                 "name; the total first");
    cmd.add_flag("--full-names", report.full_names, "C++ names whole");
  }
};

constexpr int kError = 2;

int RunCheck(CheckCommandOptions& o) {
  auto fail = [](const std::string& what) {
    fmt::print(stderr, "hotline: check: {}\n", what);
    return kError;
  };
  o.check.threshold = o.threshold / 100;
  Expected<std::unique_ptr<history::Database>> db = history::OpenDatabase(o.where.db, true);
  if (!db) return fail(db.status().message());
  Expected<std::string> workload = history::ChooseWorkload(**db, o.workload);
  if (!workload) return fail(workload.status().message());
  std::optional<history::GitState> git = history::GitStateOf(".");
  if (!git) return fail("the current folder is in no git repository: check compares commits");
  Expected<std::string> commit = history::ResolveCommit(git->top, o.revision);
  if (!commit) return fail(commit.status().message());

  history::RunFilter filter;
  filter.workload = *workload;
  filter.functions = false;
  Expected<std::vector<history::RunRecord>> all = history::FindRuns(**db, filter);
  if (!all) return fail(all.status().message());
  std::set<std::string> with_runs;
  for (const history::RunRecord& r : *all) with_runs.insert(r.commit);

  std::string baseline;
  if (!o.baseline.empty()) {
    Expected<std::string> named = history::ResolveCommit(git->top, o.baseline);
    if (!named) return fail(fmt::format("--baseline: {}", named.status().message()));
    baseline = *named;
    if (!with_runs.count(baseline))
      return fail(fmt::format("the baseline {} has no runs of workload {}", baseline.substr(0, 8),
                              *workload));
  } else {
    Expected<std::vector<std::string>> ancestry = history::Ancestry(git->top, *commit);
    if (!ancestry) return fail(ancestry.status().message());
    for (size_t i = 1; i < ancestry->size() && baseline.empty(); ++i)
      if (with_runs.count((*ancestry)[i])) baseline = (*ancestry)[i];
    if (baseline.empty())
      return fail(fmt::format("no ancestor of {} has runs of workload {}: nothing to compare with",
                              commit->substr(0, 8), *workload));
  }
  if (baseline == *commit) return fail("the baseline is the commit checked");

  filter.functions = true;
  filter.commit = *commit;
  Expected<std::vector<history::RunRecord>> next = history::FindRuns(**db, filter);
  if (!next) return fail(next.status().message());
  filter.commit = baseline;
  Expected<std::vector<history::RunRecord>> base = history::FindRuns(**db, filter);
  if (!base) return fail(base.status().message());
  for (auto [runs, which] : {std::pair{&*next, *commit}, std::pair{&*base, baseline}})
    if (runs->size() < o.check.min_runs)
      return fail(fmt::format(
          "{} has {} run{} of workload {}; a verdict needs at least {} on each side (record "
          "more and `hotline history add` them)",
          which.substr(0, 8), runs->size(), runs->size() == 1 ? "" : "s", *workload,
          o.check.min_runs));
  std::vector<const analysis::RunSummary*> base_runs, new_runs;
  for (const history::RunRecord& r : *base) base_runs.push_back(&r.summary);
  for (const history::RunRecord& r : *next) new_runs.push_back(&r.summary);
  for (const analysis::RunSummary* r : new_runs)
    if (r->clock != base_runs.front()->clock)
      return fail("the runs measured CPU time on one side and elapsed time on the other");

  report::CheckReport check;
  check.workload = *workload;
  check.commit = *commit;
  check.baseline = baseline;
  check.baseline_named = !o.baseline.empty();
  check.result = history::Check(base_runs, new_runs, o.check);
  std::string out;
  report::PrintCheck(
      check, o.format == "markdown" ? report::CheckFormat::kMarkdown : report::CheckFormat::kText,
      o.report, out);
  fmt::print("{}", out);
  return check.result.Slower() ? 1 : 0;
}

}  // namespace

void RegisterCheckCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<CheckCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "check", "CI: is this commit slower than its baseline? (exit 0 no, 1 yes, 2 cannot tell)");
  options->Register(*cmd);
  cmd->callback([options, exit_code] { *exit_code = RunCheck(*options); });
}

}  // namespace hotline::cli

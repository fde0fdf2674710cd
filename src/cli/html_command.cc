// `hotline html [FILE] -o DIR`: the static HTML report (docs/html.md). Reads the profile (and its
// heap, when recorded with --heap), builds the model and writes the report directory.
// `hotline html DIR|FILE... -o DIR`: several runs (a sweep's) added up, and their complexity.
// `hotline html --diff BASE NEW -o DIR`: the differential flame graph of two profiles.
// `hotline html --history -o DIR`: a workload's history from the run database, plotted.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/complexity.h"
#include "cli/commands.h"
#include "cli/history_location.h"
#include "history/git.h"
#include "history/open.h"
#include "cli/load_profile.h"
#include "cli/profile_path.h"
#include "format/reader.h"
#include "html/diff.h"
#include "html/history.h"
#include "html/html.h"
#include "model/build.h"
#include "model/heap.h"
#include "model/merge.h"
#include "report/report.h"
#include "symbolize/symbolizer.h"

namespace hotline::cli {
namespace {

struct HtmlCommandOptions {
  std::vector<std::string> files;
  std::string output;
  std::vector<std::string> source_dirs;
  bool diff = false;
  bool history = false;
  HistoryLocation where;
  history::HistoryQuery query;
  size_t history_functions = 8;
  double threshold = 5, confidence = 0.95;
  model::MergeOptions merge;

  void Register(CLI::App& cmd) {
    cmd.add_option("-o,--output", output,
                   "the report's directory (created; an earlier report there is replaced)")
        ->required();
    cmd.add_option("--source-dir", source_dirs,
                   "another directory to look for sources in (repeatable)")
        ->allow_extra_args(false);
    cmd.add_flag("--diff", diff,
                 "a differential flame graph of two profiles, BASE NEW: red slower, blue faster");
    cmd.add_flag("--history", history,
                 "a workload's time per commit from the run database (hotline history), plotted");
    where.Register(cmd);
    cmd.add_option("-w,--workload", query.workload,
                   "with --history: the workload (default: the database's only one)");
    cmd.add_option("--rev", query.revision,
                   "with --history: whose ancestry to plot, oldest to newest (default HEAD)");
    cmd.add_flag("--all", query.all, "with --history: the commits off that ancestry too");
    cmd.add_option("--functions", history_functions,
                   "with --history: how many of the costliest functions to plot (default 8)");
    cmd.add_option("--threshold", threshold,
                   "with --history: a change is marked when surely beyond this percent "
                   "(default 5)")
        ->check(CLI::Range(0.0, 1000.0));
    cmd.add_option("-c,--confidence", confidence,
                   "with --history: how sure a marked change must be (default 0.95)")
        ->check(CLI::Range(0.5, 0.9999));
    cmd.add_flag("--force", merge.force, "with several FILEs: add up runs of different programs");
    cmd.add_option("FILE", files,
                   "the profile (default: the newest *.hotline here); several, or a directory "
                   "(a sweep's), are runs added up, with a complexity page when they have sizes; "
                   "with --diff, BASE and NEW");
  }
};

// What reading met, for stderr and for the report's overview.
std::vector<std::string> ReadingProblems(const std::string& file, const format::ReadStats& stats,
                                         const model::Profile& profile) {
  std::vector<std::string> problems;
  if (stats.damaged())
    problems.push_back(
        fmt::format("{}: damaged, reporting what could be read: {}", file, stats.summary()));
  for (const std::string& problem : stats.problems)
    problems.push_back(fmt::format("{}: {}", file, problem));
  if (stats.unknown_records)
    problems.push_back(
        fmt::format("{}: {} records of unknown kinds skipped (written by a newer hotline)", file,
                    stats.unknown_records));
  if (!profile.summary.end)
    problems.push_back(fmt::format("{}: {}", file, report::DescribeEnding(profile)));
  if (profile.summary.samples == 0)
    problems.push_back(fmt::format("{}: the profile holds no samples", file));
  return problems;
}

// A report that could not be written is one line of error; the warnings (which the report shows
// too) follow a report written.
int Finish(const Status& written, const std::vector<std::string>& warnings,
           const std::string& output) {
  if (!written.ok()) {
    fmt::print(stderr, "hotline: html: {}\n", written.message());
    return 1;
  }
  for (const std::string& w : warnings) Warn(w);
  fmt::print(stderr, "hotline: wrote {}/index.html\n", output);
  return 0;
}

int RunHtmlDiff(const HtmlCommandOptions& o) {
  if (o.files.size() != 2) {
    fmt::print(stderr, "hotline: html: --diff needs two profiles, BASE and NEW\n");
    return 2;
  }
  symbolize::Symbolizer symbolizer;
  model::SymbolizerResolver resolver(symbolizer);
  Expected<std::vector<model::Profile>> profiles = LoadEach(o.files, resolver, {});
  if (!profiles) {
    fmt::print(stderr, "hotline: {}\n", profiles.status().message());
    return 1;
  }
  html::DiffInput input;
  input.base = &(*profiles)[0];
  input.next = &(*profiles)[1];
  input.base_path = o.files[0];
  input.new_path = o.files[1];
  for (size_t i = 0; i < 2; ++i)
    if ((*profiles)[i].summary.samples == 0)
      input.warnings.push_back(fmt::format("{}: the profile holds no samples", o.files[i]));
  std::vector<std::string> warnings = input.warnings;
  for (const model::Profile& p : *profiles)
    warnings.insert(warnings.end(), p.warnings.begin(), p.warnings.end());
  return Finish(html::WriteDiffReport(input, o.output), warnings, o.output);
}

// The page's series: the total, then the functions with the most self time at the newest commit.
html::HistoryInput HistoryPage(const history::WorkloadHistory& h, const HtmlCommandOptions& o,
                               const std::string& database) {
  html::HistoryInput input;
  input.database = database;
  input.workload = o.query.workload;
  for (size_t i = 0; i < h.commits.size(); ++i) {
    const history::CommitRuns& c = h.commits[i];
    const history::RunRecord& newest = *c.runs.back();
    bool dirty = std::any_of(c.runs.begin(), c.runs.end(),
                             [](const history::RunRecord* r) { return r->dirty; });
    input.commits.push_back({c.commit, h.subjects[i], newest.branch, newest.added_at, dirty});
  }
  std::map<std::string, double> self;  // at the newest commit, Σ over its runs
  std::map<std::string, std::string> file;
  for (const history::RunRecord* run : h.commits.back().runs)
    for (const analysis::FunctionCost& f : run->summary.functions) {
      self[f.name] += double(f.self_ns);
      file.emplace(f.name, f.file);
    }
  std::vector<std::pair<double, std::string>> costliest;
  for (const auto& [name, ns] : self) costliest.emplace_back(-ns, name);
  std::sort(costliest.begin(), costliest.end());
  std::vector<std::string> names = {""};
  for (size_t i = 0; i < costliest.size() && i < o.history_functions; ++i)
    names.push_back(costliest[i].second);
  for (const std::string& name : names) {
    history::Series s = history::MakeSeries(h.commits, name, true, o.threshold / 100, o.confidence);
    html::HistorySeries series;
    series.name = s.name;
    series.file = name.empty() ? "" : file[name];
    series.self = true;
    for (const std::optional<history::Point>& p : s.points)
      series.values.push_back(
          p ? std::optional<html::HistoryValue>({p->runs, p->mean_ns, p->min_ns, p->max_ns})
            : std::nullopt);
    // The largest change marks the page.
    for (const history::Step& step : s.steps)
      if (!series.change_at || std::fabs(step.change) > std::fabs(series.change))
        series.change_at = step.at, series.change = step.change;
    input.series.push_back(std::move(series));
  }
  return input;
}

int RunHtmlHistory(HtmlCommandOptions& o) {
  auto fail = [](const std::string& what) {
    fmt::print(stderr, "hotline: html: {}\n", what);
    return 1;
  };
  if (!o.files.empty()) {
    fmt::print(stderr, "hotline: html: --history reads the run database, not profiles\n");
    return 2;
  }
  Expected<std::unique_ptr<history::Database>> db = history::OpenDatabase(o.where.db, true);
  if (!db) return fail(db.status().message());
  Expected<std::string> workload = history::ChooseWorkload(**db, o.query.workload);
  if (!workload) return fail(workload.status().message());
  o.query.workload = *workload;
  o.query.functions = true;
  Expected<history::WorkloadHistory> h = history::LoadWorkloadHistory(**db, o.query);
  if (!h) return fail(h.status().message());
  return Finish(html::WriteHistoryReport(HistoryPage(*h, o, (*db)->name()), o.output), {},
                o.output);
}

// Several runs (a sweep's directory, or its files): their sum is the report, and each run on
// its own gives the complexity page its points, as `hotline report -X` reads them.
int RunHtmlRuns(const HtmlCommandOptions& o, const std::vector<std::string>& files) {
  symbolize::Symbolizer symbolizer;
  model::SymbolizerResolver resolver(symbolizer);
  Expected<std::vector<model::Profile>> runs = LoadEach(files, resolver, {});
  if (!runs) {
    fmt::print(stderr, "hotline: {}\n", runs.status().message());
    return 1;
  }
  std::vector<const model::Profile*> pointers;
  for (const model::Profile& run : *runs) pointers.push_back(&run);
  // Two programs' profiles are more likely meant to be compared than added up.
  for (const model::Profile& run : *runs)
    if (run.summary.exe != runs->front().summary.exe && !o.merge.force) {
      fmt::print(stderr,
                 "hotline: html: {}: profiles of different programs ({}, {}): --diff compares "
                 "two, --force adds them up\n",
                 fmt::join(o.files, ", "), runs->front().summary.exe, run.summary.exe);
      return 2;
    }
  Expected<model::Profile> merged = model::MergeProfiles(pointers, o.merge);
  if (!merged) {
    fmt::print(stderr, "hotline: html: {}: {}\n", fmt::join(o.files, ", "),
               merged.status().message());
    return 1;
  }
  std::vector<analysis::FunctionComplexity> fits = analysis::FitProfiles(pointers, 1.0);
  html::HtmlInput input;
  input.profile = &*merged;
  input.complexity = &fits;
  input.profile_path = fmt::format("{} ({} runs)", fmt::join(o.files, ", "), files.size());
  input.source_dirs = o.source_dirs;
  input.warnings = merged->warnings;
  return Finish(html::WriteHtmlReport(input, o.output), input.warnings, o.output);
}

int RunHtml(HtmlCommandOptions& o) {
  if (o.diff && o.history) {
    fmt::print(stderr, "hotline: html: --diff or --history, not both\n");
    return 2;
  }
  if (o.diff) return RunHtmlDiff(o);
  if (o.history) return RunHtmlHistory(o);
  bool named = !o.files.empty();
  if (Status resolved = ResolveProfileArguments(o.files, /*folders=*/true); !resolved.ok()) {
    fmt::print(stderr, "hotline: html: {}\n", resolved.message());
    return 1;
  }
  std::vector<std::string> files = ExpandDirectories(o.files);
  if (files.size() > 1) return RunHtmlRuns(o, files);
  const std::string& file = files.front();
  if (!named) fmt::print(stderr, "hotline: reading {} (the newest profile here)\n", file);
  symbolize::Symbolizer symbolizer;
  model::SymbolizerResolver resolver(symbolizer);
  format::ReadStats stats;
  model::BuildOptions build;
  build.keep_calls = true;  // a timed trace's timeline
  Expected<model::Profile> profile = model::LoadProfile(file, resolver, build, &stats);
  if (!profile) {
    fmt::print(stderr, "hotline: {}\n", profile.status().message());
    return 1;
  }
  // The heap needs every record in memory: read them again only for a profile that has some.
  std::optional<model::HeapProfile> heap;
  if (stats.features & format::kFeatureHeap) heap = LoadHeap(file, resolver);
  std::optional<model::WatchProfile> watches;
  if (profile->summary.watched) watches = LoadWatches(file, resolver);
  // Calls tagged by hotline_size(). One run of a sweep alone has one size: nothing to fit.
  std::vector<analysis::FunctionComplexity> fits;
  if (!profile->sized_calls.empty()) fits = analysis::FitProfiles({&*profile}, 1.0);
  html::HtmlInput input;
  input.profile = &*profile;
  input.heap = heap ? &*heap : nullptr;
  input.watches = watches ? &*watches : nullptr;
  input.complexity = &fits;
  input.profile_path = file;
  input.warnings = ReadingProblems(file, stats, *profile);
  input.source_dirs = o.source_dirs;
  std::vector<std::string> warnings = input.warnings;
  warnings.insert(warnings.end(), profile->warnings.begin(), profile->warnings.end());
  return Finish(html::WriteHtmlReport(input, o.output), warnings, o.output);
}

}  // namespace

void RegisterHtmlCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<HtmlCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "html",
      "write a static HTML report (flame graph, functions, annotated sources) into a directory");
  options->Register(*cmd);
  cmd->callback([options, exit_code] { *exit_code = RunHtml(*options); });
}

}  // namespace hotline::cli

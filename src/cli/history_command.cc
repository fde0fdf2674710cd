// `hotline history add FILE...` stores runs in the run database; `hotline history log
// [FUNCTION]` shows a workload's time per commit (docs/history.md).
#include <fmt/core.h>

#include <ctime>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/history_location.h"
#include "history/git.h"
#include "history/open.h"
#include "cli/load_profile.h"
#include "history/series.h"
#include "model/heap.h"
#include "model/system_code.h"
#include "report/history.h"
#include "symbolize/symbolizer.h"

namespace hotline::cli {
namespace {

namespace fs = std::filesystem;

struct HistoryAddOptions {
  HistoryLocation where;
  std::vector<std::string> files;
  std::string workload;
  std::string commit;

  void Register(CLI::App& cmd) {
    where.Register(cmd);
    cmd.add_option("-w,--workload", workload,
                   "what the runs measured (default: the program's file name)");
    cmd.add_option("--commit", commit,
                   "the commit the program was built from (default: HEAD of the repository "
                   "holding the program, its sources or the current folder)");
    cmd.add_option("FILE", files, "profiles to add, each one run")->required();
  }
};

// The folders where the repository the program was built from may be: the program's, its
// sources' (an out-of-tree build), then the current one.
std::vector<std::string> RepositoryCandidates(const model::Profile& p) {
  std::vector<std::string> folders;
  auto add = [&folders](const fs::path& path) {
    std::string folder = path.parent_path().string();
    std::error_code ec;
    if (!folder.empty() && fs::is_directory(folder, ec) &&
        std::find(folders.begin(), folders.end(), folder) == folders.end())
      folders.push_back(folder);
  };
  if (!p.summary.exe.empty()) add(p.summary.exe);
  for (const model::File& f : p.files)
    if (f.time_ns && f.pseudo == model::PseudoKind::kNone && fs::path(f.path).is_absolute() &&
        !model::IsSystemSource(f.path) && folders.size() < 4)
      add(f.path);
  folders.push_back(".");
  return folders;
}

// The commit, branch and dirtiness to record for a run of `p`.
Status IdentifyCommit(const model::Profile& p, const std::string& named, history::RunRecord& run) {
  std::optional<history::GitState> git;
  for (const std::string& folder : RepositoryCandidates(p))
    if ((git = history::GitStateOf(folder))) break;
  if (!git)
    return Status::Error(
        named.empty()
            ? "neither the program's folder, nor its sources', nor the current one is in a git "
              "repository: name the commit with --commit, from a folder of its repository"
            : fmt::format("--commit {}: no git repository to look for it in (neither the "
                          "program's folder, nor its sources', nor the current one)",
                          named));
  if (named.empty()) {
    run.commit = git->commit;
    run.branch = git->branch;
    run.dirty = git->dirty;
    return Status();
  }
  Expected<std::string> commit = history::ResolveCommit(git->top, named);
  if (!commit) return Status::Error(fmt::format("--commit: {}", commit.status().message()));
  run.commit = *commit;
  if (run.commit == git->commit) {  // HEAD named: its branch and state are known
    run.branch = git->branch;
    run.dirty = git->dirty;
  }
  return Status();
}

int RunHistoryAdd(const HistoryAddOptions& o) {
  Expected<std::unique_ptr<history::Database>> db = history::OpenDatabase(o.where.db, false);
  if (!db) {
    fmt::print(stderr, "hotline: history add: {}\n", db.status().message());
    return 1;
  }
  symbolize::Symbolizer symbolizer;
  model::SymbolizerResolver resolver(symbolizer);
  history::Machine machine = history::ThisMachine();
  for (const std::string& file : o.files) {
    format::ReadStats stats;
    Expected<model::Profile> profile = model::LoadProfile(file, resolver, {}, &stats);
    if (!profile) {
      fmt::print(stderr, "hotline: history add: {}\n", profile.status().message());
      return 1;
    }
    WarnAboutFile(file, stats, *profile);
    if (profile->summary.samples == 0) {
      fmt::print(stderr, "hotline: history add: {}: holds no samples: not added\n", file);
      return 1;
    }
    history::RunRecord run;
    if (Status s = IdentifyCommit(*profile, o.commit, run); !s.ok()) {
      fmt::print(stderr, "hotline: history add: {}: {}\n", file, s.message());
      return 1;
    }
    run.added_at = static_cast<int64_t>(time(nullptr));
    run.started_at = static_cast<int64_t>(profile->summary.start_realtime_ns);
    run.workload =
        o.workload.empty() ? fs::path(profile->summary.exe).filename().string() : o.workload;
    run.program = profile->summary.exe;
    for (size_t i = 1; i < profile->summary.argv.size(); ++i)
      run.arguments += (i > 1 ? " " : "") + profile->summary.argv[i];
    std::error_code ec;
    run.profile = fs::absolute(file, ec).lexically_normal().string();
    run.machine = machine;
    if (stats.features & format::kFeatureHeap)
      if (std::optional<model::HeapProfile> heap = LoadHeap(file, resolver))
        run.heap = history::HeapTotals{heap->peak_bytes, heap->total_bytes, heap->alloc_calls};
    run.summary = analysis::Summarize(*profile);
    Expected<int64_t> id = history::AddRun(**db, run);
    if (!id) {
      fmt::print(stderr, "hotline: history add: {}: {}\n", file, id.status().message());
      return 1;
    }
    fmt::print("{}: run {} of workload {}, commit {}{}{}\n", file, *id, run.workload,
               run.commit.substr(0, 8), run.branch.empty() ? "" : " (" + run.branch + ")",
               run.dirty ? ", uncommitted changes" : "");
  }
  return 0;
}

struct HistoryLogOptions {
  HistoryLocation where;
  std::string function;
  std::string workload;
  std::string revision = "HEAD";
  bool all = false;
  size_t max_commits = 20;
  double threshold = 5, confidence = 0.95;
  report::ReportOptions report;

  void Register(CLI::App& cmd) {
    where.Register(cmd);
    cmd.add_option("-w,--workload", workload, "the workload (default: the database's only one)");
    cmd.add_option("-n,--max-count", max_commits, "commits shown, newest first (default 20)")
        ->check(Positive());
    cmd.add_option("--rev", revision, "whose ancestry to show, oldest to newest (default HEAD)");
    cmd.add_flag("--all", all, "also the commits that are not ancestors of --rev");
    cmd.add_option("--threshold", threshold,
                   "a change is marked when surely beyond this percent (default 5)")
        ->check(CLI::Range(0.0, 1000.0));
    cmd.add_option("-c,--confidence", confidence,
                   "how sure a marked change must be, for the series as a whole (default 0.95)")
        ->check(CLI::Range(0.5, 0.9999));
    cmd.add_flag("-m,--machine", report.machine,
                 "TAB-separated: commit, Unix time, runs, each series' mean in ns, change, "
                 "subject");
    cmd.add_flag("--full-names", report.full_names, "C++ names whole");
    cmd.add_option("FUNCTION", function,
                   "a function whose self and inclusive time to show (its name, or a part of it "
                   "that names one)");
  }
};

int RunHistoryLog(const HistoryLogOptions& o) {
  auto fail = [](const std::string& what) {
    fmt::print(stderr, "hotline: history log: {}\n", what);
    return 1;
  };
  Expected<std::unique_ptr<history::Database>> db = history::OpenDatabase(o.where.db, true);
  if (!db) return fail(db.status().message());
  Expected<std::string> workload = history::ChooseWorkload(**db, o.workload);
  if (!workload) return fail(workload.status().message());
  std::string function;
  if (!o.function.empty()) {
    Expected<std::vector<std::string>> names =
        history::FunctionsNamed(**db, *workload, o.function, 11);
    if (!names) return fail(names.status().message());
    if (names->empty())
      return fail(fmt::format("no function of workload {} is named '{}' or has it in its name",
                              *workload, o.function));
    if (names->size() > 1) {
      std::string some;
      for (size_t i = 0; i < names->size() && i < 10; ++i) some += "\n  " + (*names)[i];
      return fail(fmt::format("'{}' is in the names of several functions; name one whole:{}{}",
                              o.function, some, names->size() > 10 ? "\n  ..." : ""));
    }
    function = names->front();
  }
  history::HistoryQuery query;
  query.workload = *workload;
  query.revision = o.revision;
  query.all = o.all;
  if (!function.empty()) query.function = function;
  Expected<history::WorkloadHistory> history = history::LoadWorkloadHistory(**db, query);
  if (!history) return fail(history.status().message());
  report::HistoryLog log;
  log.database = (*db)->name();
  log.workload = *workload;
  log.commits = history->commits;
  log.subjects = history->subjects;
  double threshold = o.threshold / 100;
  log.series.push_back(history::MakeSeries(log.commits, "", true, threshold, o.confidence));
  if (!function.empty()) {
    log.series.push_back(
        history::MakeSeries(log.commits, function, false, threshold, o.confidence));
    log.series.push_back(history::MakeSeries(log.commits, function, true, threshold, o.confidence));
  }
  log.max_commits = o.max_commits;
  std::string out;
  report::PrintHistoryLog(log, o.report, out);
  fmt::print("{}", out);
  return 0;
}

}  // namespace

void RegisterHistoryCommand(CLI::App& app, int* exit_code) {
  CLI::App* history =
      app.add_subcommand("history", "the run database: add runs, show a workload per commit");
  history->require_subcommand(1);
  auto add_options = std::make_shared<HistoryAddOptions>();
  CLI::App* add = history->add_subcommand(
      "add", "store runs (profiles) in the run database with their commit and machine");
  add_options->Register(*add);
  add->callback([add_options, exit_code] { *exit_code = RunHistoryAdd(*add_options); });
  auto log_options = std::make_shared<HistoryLogOptions>();
  CLI::App* log = history->add_subcommand(
      "log", "a workload's time per commit, newest first, and where it changed");
  log_options->Register(*log);
  log->callback([log_options, exit_code] { *exit_code = RunHistoryLog(*log_options); });
}

}  // namespace hotline::cli

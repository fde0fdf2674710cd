#include "history/open.h"

#include <fmt/core.h>

#include <cstdlib>
#include <filesystem>

#include "history/git.h"
#include "history/schema.h"

namespace hotline::history {

Expected<std::unique_ptr<Database>> OpenDatabase(const std::string& named, bool must_exist) {
  std::string db = named;
  if (db.empty())
    if (const char* env = getenv("HOTLINE_DB"); env && *env) db = env;
  if (db.empty()) {
    std::optional<GitState> git = GitStateOf(".");
    db = (std::filesystem::path(git ? git->top : ".") / ".hotline" / "history.db")
             .lexically_normal()
             .string();
  }
  bool url = db.starts_with("postgresql://") || db.starts_with("postgres://");
  std::error_code ec;
  if (must_exist && !url && !std::filesystem::exists(db, ec))
    return Status::Error(
        fmt::format("no run database at {} (add runs to it with `hotline history add`)", db));
  Expected<std::unique_ptr<Database>> opened = Connect(db);
  if (!opened) return opened;
  if (Status s = PrepareSchema(**opened); !s.ok()) return s;
  return opened;
}

Expected<std::string> ChooseWorkload(Database& db, const std::string& named) {
  Expected<std::vector<WorkloadInfo>> workloads = Workloads(db);
  if (!workloads) return workloads.status();
  std::string names;
  for (const WorkloadInfo& w : *workloads) {
    if (!named.empty() && w.name == named) return named;
    names += (names.empty() ? "" : ", ") + w.name;
  }
  if (workloads->empty()) return Status::Error(fmt::format("{}: holds no runs yet", db.name()));
  if (!named.empty())
    return Status::Error(
        fmt::format("{}: no runs of workload '{}' (there are: {})", db.name(), named, names));
  if (workloads->size() == 1) return workloads->front().name;
  return Status::Error(
      fmt::format("{}: holds several workloads; name one with --workload: {}", db.name(), names));
}

Expected<WorkloadHistory> LoadWorkloadHistory(Database& db, const HistoryQuery& query) {
  RunFilter filter;
  filter.workload = query.workload;
  filter.functions = query.functions || query.function;
  filter.function = query.function;
  Expected<std::vector<RunRecord>> runs = FindRuns(db, filter);
  if (!runs) return runs.status();
  std::vector<std::string> ancestry;
  std::optional<GitState> git = GitStateOf(".");
  if (git) {
    Expected<std::string> tip = ResolveCommit(git->top, query.revision);
    if (!tip) return tip.status();
    Expected<std::vector<std::string>> commits = Ancestry(git->top, *tip);
    if (!commits) return commits.status();
    ancestry = std::move(*commits);
  } else if (query.revision != "HEAD") {
    return Status::Error("--rev needs a git repository: the current folder is in none");
  }
  WorkloadHistory h;
  h.runs = std::move(*runs);
  h.commits = GroupByCommit(h.runs, ancestry, query.all);
  if (h.commits.empty())
    return Status::Error(
        fmt::format("no runs of workload {} at {} or its ancestors (--all shows the others)",
                    query.workload, query.revision));
  for (const CommitRuns& c : h.commits)
    h.subjects.push_back(git ? Subject(git->top, c.commit) : "");
  return h;
}

}  // namespace hotline::history

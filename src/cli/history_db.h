// Opening the run database for `hotline history` and `hotline check`: where it is, and the
// repository the commands work in.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "history/database.h"
#include "history/git.h"
#include "history/runs.h"
#include "history/series.h"

namespace hotline::cli {

struct HistoryLocation {
  std::string db;  // --db: a path or a postgresql:// URL; else $HOTLINE_DB; else the default

  void Register(CLI::App& cmd);
};

// The database named by --db or $HOTLINE_DB, else .hotline/history.db at the top of the git
// repository holding the current folder (the current folder when there is none). Its schema is
// made or migrated. `must_exist`: a missing SQLite file is an error (nothing to read) rather
// than created.
Expected<std::unique_ptr<history::Database>> OpenHistory(const HistoryLocation& where,
                                                         bool must_exist);

// The workload to read: `named` when given, else the database's only one. Fails naming the
// workloads there are.
Expected<std::string> ChooseWorkload(history::Database& db, const std::string& named);

// A workload's runs grouped by commit, oldest first (history::GroupByCommit), with the commits'
// subjects when the current folder is in their repository.
struct WorkloadHistory {
  std::vector<history::RunRecord> runs;
  std::vector<history::CommitRuns> commits;  // point into runs
  std::vector<std::string> subjects;         // one per commit
};

struct HistoryQuery {
  std::string workload;
  std::string revision = "HEAD";        // whose ancestry orders the commits (in a repository)
  bool all = false;                     // the commits that are not its ancestors too
  bool functions = false;               // every run's functions
  std::optional<std::string> function;  // ... or only this one's
};

Expected<WorkloadHistory> LoadWorkloadHistory(history::Database& db, const HistoryQuery& query);

}  // namespace hotline::cli

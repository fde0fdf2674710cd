// Opening the run database as `hotline history`, `check` and `html --history` do: where it is
// when not named, the workload to read, and a workload's runs by commit in the repository the
// current folder is in.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "history/database.h"
#include "history/runs.h"
#include "history/series.h"

namespace hotline::history {

// The database `named` (a path or a postgresql:// URL); when empty, $HOTLINE_DB; else
// .hotline/history.db at the top of the git repository holding the current folder (the current
// folder when there is none). Its schema is made or migrated. `must_exist`: a missing SQLite file
// is an error (nothing to read) rather than created.
Expected<std::unique_ptr<Database>> OpenDatabase(const std::string& named, bool must_exist);

// The workload to read: `named` when given, else the database's only one. Fails naming the
// workloads there are.
Expected<std::string> ChooseWorkload(Database& db, const std::string& named);

// A workload's runs grouped by commit, oldest first (GroupByCommit), with the commits'
// subjects when the current folder is in their repository.
struct WorkloadHistory {
  std::vector<RunRecord> runs;
  std::vector<CommitRuns> commits;    // point into runs
  std::vector<std::string> subjects;  // one per commit
};

struct HistoryQuery {
  std::string workload;
  std::string revision = "HEAD";        // whose ancestry orders the commits (in a repository)
  bool all = false;                     // the commits that are not its ancestors too
  bool functions = false;               // every run's functions
  std::optional<std::string> function;  // ... or only this one's
};

Expected<WorkloadHistory> LoadWorkloadHistory(Database& db, const HistoryQuery& query);

}  // namespace hotline::history

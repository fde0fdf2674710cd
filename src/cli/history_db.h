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

}  // namespace hotline::cli

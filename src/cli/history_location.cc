#include "cli/history_location.h"

namespace hotline::cli {

void HistoryLocation::Register(CLI::App& cmd) {
  cmd.add_option("--db", db,
                 "the run database: a file (SQLite) or postgresql://... (default: $HOTLINE_DB, "
                 "else .hotline/history.db in the repository)");
}

}  // namespace hotline::cli

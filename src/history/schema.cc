#include "history/schema.h"

#include <fmt/core.h>

#include <algorithm>
#include <string>
#include <vector>

namespace hotline::history {
namespace {

// Each version's statements. `{id}` is the engine's spelling of an identity column.
const std::vector<std::vector<const char*>> kMigrations = {
    // 1: runs and their functions.
    {
        "CREATE TABLE hotline_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE runs ("
        " id {id},"
        " added_at BIGINT NOT NULL,"    // when `history add` stored it, Unix seconds
        " started_at BIGINT NOT NULL,"  // when the run started, Unix ns; 0 when unknown
        " commit_id TEXT NOT NULL,"
        " branch TEXT NOT NULL,"  // empty: detached HEAD
        " dirty INTEGER NOT NULL,"
        " workload TEXT NOT NULL,"
        " program TEXT NOT NULL,"
        " arguments TEXT NOT NULL,"
        " profile TEXT NOT NULL,"
        " hostname TEXT NOT NULL,"
        " cpu_model TEXT NOT NULL,"
        " kernel TEXT NOT NULL,"
        " clock TEXT NOT NULL,"  // cpu or wall
        " total_ns BIGINT NOT NULL,"
        " samples BIGINT NOT NULL,"
        " period_ns BIGINT NOT NULL)",
        "CREATE INDEX runs_by_workload ON runs (workload, commit_id)",
        "CREATE TABLE functions ("
        " run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
        " name TEXT NOT NULL,"
        " file TEXT NOT NULL,"
        " line INTEGER NOT NULL,"
        " module TEXT NOT NULL,"
        " self_ns BIGINT NOT NULL,"
        " inclusive_ns BIGINT NOT NULL,"
        " calls BIGINT NOT NULL,"
        " samples BIGINT NOT NULL)",
        "CREATE INDEX functions_by_run ON functions (run_id)",
        "CREATE INDEX functions_by_name ON functions (name)",
    },
    // 2: lines, and the heap's totals.
    {
        "CREATE TABLE lines ("
        " run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
        " file TEXT NOT NULL,"
        " line INTEGER NOT NULL,"
        " self_ns BIGINT NOT NULL,"
        " inclusive_ns BIGINT NOT NULL,"
        " count BIGINT NOT NULL,"
        " samples BIGINT NOT NULL)",
        "CREATE INDEX lines_by_run ON lines (run_id)",
        "ALTER TABLE runs ADD COLUMN heap_peak_bytes BIGINT",  // NULL: no heap recorded
        "ALTER TABLE runs ADD COLUMN heap_total_bytes BIGINT",
        "ALTER TABLE runs ADD COLUMN heap_allocations BIGINT",
    },
};

std::string ForEngine(std::string sql, Engine engine) {
  if (size_t at = sql.find("{id}"); at != std::string::npos)
    sql.replace(at, 4, engine == Engine::kSqlite ? "INTEGER PRIMARY KEY" : "BIGSERIAL PRIMARY KEY");
  return sql;
}

// The version of the schema in the database, 0 when it is empty.
Expected<int> CurrentVersion(Database& db) {
  Expected<std::vector<std::string>> tables = db.Tables();
  if (!tables) return tables.status();
  if (tables->empty()) return 0;
  if (std::find(tables->begin(), tables->end(), "hotline_meta") == tables->end()) {
    std::string some;
    for (size_t i = 0; i < tables->size() && i < 3; ++i) some += (i ? ", " : "") + (*tables)[i];
    return Status::Error(fmt::format("{}: not a hotline history database (it holds {}{})",
                                     db.name(), some, tables->size() > 3 ? ", ..." : ""));
  }
  std::vector<Row> rows;
  if (Status s = db.Run("SELECT value FROM hotline_meta WHERE key = 'schema_version'", {}, &rows);
      !s.ok())
    return s;
  int version = rows.empty() ? 0 : static_cast<int>(Integer(rows[0][0]));
  if (version < 1)
    return Status::Error(
        fmt::format("{}: not a hotline history database (no schema version)", db.name()));
  return version;
}

Status Migrate(Database& db, int version) {
  Expected<int> current = CurrentVersion(db);
  if (!current) return current.status();
  if (*current > kSchemaVersion)
    return Status::Error(fmt::format(
        "{}: written by a newer hotline (schema version {}; this hotline knows up to {})",
        db.name(), *current, kSchemaVersion));
  for (int v = *current + 1; v <= version; ++v) {
    for (const char* statement : kMigrations[static_cast<size_t>(v - 1)])
      if (Status s = db.Run(ForEngine(statement, db.engine())); !s.ok())
        return Status::Error(fmt::format("migrating to schema version {}: {}", v, s.message()));
    std::vector<Value> params = {std::string(std::to_string(v))};
    const char* store = v == 1
                            ? "INSERT INTO hotline_meta (key, value) VALUES ('schema_version', $1)"
                            : "UPDATE hotline_meta SET value = $1 WHERE key = 'schema_version'";
    if (Status s = db.Run(store, params); !s.ok()) return s;
  }
  return Status();
}

}  // namespace

Status PrepareSchema(Database& db, int version) {
  if (Status s = db.BeginWrite(); !s.ok()) return s;
  Status migrated = Migrate(db, std::min(version, kSchemaVersion));
  if (!migrated.ok()) {
    db.Rollback();
    return migrated;
  }
  return db.Commit();
}

}  // namespace hotline::history

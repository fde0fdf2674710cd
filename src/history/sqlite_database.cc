// The SQLite engine: a file beside the repository, written in WAL mode so that readers never wait
// for a writer, and writers wait for each other (busy timeout) instead of failing.
#include <fmt/core.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>

#include "history/database.h"

namespace hotline::history {
namespace {

// $N as SQLite's ?N, which binds by number whatever order the parameters appear in.
std::string NumberedParameters(std::string_view sql) {
  std::string out;
  out.reserve(sql.size());
  bool quoted = false;
  for (size_t i = 0; i < sql.size(); ++i) {
    char c = sql[i];
    if (c == '\'') quoted = !quoted;
    if (c == '$' && !quoted && i + 1 < sql.size() &&
        isdigit(static_cast<unsigned char>(sql[i + 1])))
      c = '?';
    out += c;
  }
  return out;
}

class SqliteDatabase final : public Database {
 public:
  explicit SqliteDatabase(std::string path) { name_ = std::move(path); }
  ~SqliteDatabase() override { sqlite3_close_v2(db_); }

  Status Open() {
    int rc =
        sqlite3_open_v2(name_.c_str(), &db_,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) return Failure("cannot open");
    // Another process adding a run holds the write lock for milliseconds: wait for it.
    sqlite3_busy_timeout(db_, 30000);
    if (Status s = Run("PRAGMA foreign_keys = ON"); !s.ok()) return s;
    // A file that is not SQLite's fails here, at the first read. Switching to WAL takes the
    // database whole, and SQLite answers "busy" at once, without its busy handler, while another
    // process makes the file: wait as the busy timeout would.
    for (int waited_ms = 0;; waited_ms += 5) {
      std::vector<Row> mode;
      Status s = Run("PRAGMA journal_mode = WAL", {}, &mode);
      if (s.ok() || sqlite3_errcode(db_) != SQLITE_BUSY || waited_ms >= 30000) return s;
      usleep(5000);
    }
  }

  Status Execute(std::string_view sql, std::span<const Value> params,
                 std::vector<Row>* rows) override {
    std::string text = NumberedParameters(sql);
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db_, text.c_str(), static_cast<int>(text.size()), &statement, nullptr) !=
        SQLITE_OK)
      return Failure("");
    for (size_t i = 0; i < params.size(); ++i) {
      int at = static_cast<int>(i + 1);
      if (const auto* n = std::get_if<int64_t>(&params[i])) {
        sqlite3_bind_int64(statement, at, *n);
      } else if (const auto* d = std::get_if<double>(&params[i])) {
        sqlite3_bind_double(statement, at, *d);
      } else if (const auto* s = std::get_if<std::string>(&params[i])) {
        sqlite3_bind_text(statement, at, s->data(), static_cast<int>(s->size()), SQLITE_STATIC);
      } else {
        sqlite3_bind_null(statement, at);
      }
    }
    int rc;
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW) {
      if (!rows) continue;
      Row row;
      for (int c = 0, n = sqlite3_column_count(statement); c < n; ++c) {
        const unsigned char* value = sqlite3_column_text(statement, c);
        if (value)
          row.emplace_back(std::string(reinterpret_cast<const char*>(value),
                                       static_cast<size_t>(sqlite3_column_bytes(statement, c))));
        else
          row.emplace_back(std::nullopt);
      }
      rows->push_back(std::move(row));
    }
    sqlite3_finalize(statement);
    return rc == SQLITE_DONE ? Status() : Failure("");
  }

  // IMMEDIATE: the write lock at once, so that two writers never both read then both write.
  Status BeginWrite() override { return Run("BEGIN IMMEDIATE"); }
  Status Commit() override { return Run("COMMIT"); }
  void Rollback() override { (void)Run("ROLLBACK"); }

  Expected<std::vector<std::string>> Tables() override {
    std::vector<Row> rows;
    if (Status s = Run("SELECT name FROM sqlite_master WHERE type = 'table'", {}, &rows); !s.ok())
      return s;
    std::vector<std::string> names;
    for (const Row& r : rows) names.push_back(r[0].value_or(""));
    return names;
  }

  Engine engine() const override { return Engine::kSqlite; }

 private:
  Status Failure(std::string_view doing) const {
    if (db_ && sqlite3_errcode(db_) == SQLITE_NOTADB)
      return Status::Error(
          fmt::format("{}: not a hotline history database (not even an SQLite file)", name_));
    std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    return Status::Error(
        fmt::format("{}: {}{}", name_, doing.empty() ? "" : fmt::format("{}: ", doing), why));
  }

  sqlite3* db_ = nullptr;
};

}  // namespace

Expected<std::unique_ptr<Database>> ConnectSqlite(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !std::filesystem::exists(parent, ec)) {
    std::filesystem::create_directories(parent, ec);
    if (ec)
      return Status::Error(fmt::format("cannot create {}: {}", parent.string(), ec.message()));
  }
  auto db = std::make_unique<SqliteDatabase>(path);
  if (Status s = db->Open(); !s.ok()) return s;
  return std::unique_ptr<Database>(std::move(db));
}

}  // namespace hotline::history

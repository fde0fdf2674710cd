// The run database behind `hotline history` and `hotline check`: one interface over SQLite (a
// file, the default) and PostgreSQL (a server a team's CI machines share). Statements are
// written once for both, their parameters numbered $1, $2, ...; rows come back as text.
// A Database is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/status.h"

namespace hotline::history {

using Value = std::variant<std::nullptr_t, int64_t, double, std::string>;
using Row = std::vector<std::optional<std::string>>;  // NULL: nullopt

enum class Engine { kSqlite, kPostgres };

class Database {
 public:
  virtual ~Database() = default;

  // Runs one statement; its rows into *rows when given.
  Status Run(std::string_view sql, std::span<const Value> params = {},
             std::vector<Row>* rows = nullptr) {
    return Execute(sql, params, rows);
  }
  // Starts a transaction that no other writer of the database can interleave with: the
  // schema's creation and migration, and each run added, happen whole or not at all.
  virtual Status BeginWrite() = 0;
  virtual Status Commit() = 0;
  virtual void Rollback() = 0;
  // The tables of the database (of its current schema, on PostgreSQL).
  virtual Expected<std::vector<std::string>> Tables() = 0;
  virtual Engine engine() const = 0;
  // The path, or the URL without its password: for messages.
  const std::string& name() const { return name_; }

 protected:
  virtual Status Execute(std::string_view sql, std::span<const Value> params,
                         std::vector<Row>* rows) = 0;

  std::string name_;
};

// `where` is a postgresql:// (or postgres://) URL, or a file's path (SQLite; created, with its
// folder, when missing).
Expected<std::unique_ptr<Database>> Connect(const std::string& where);

Expected<std::unique_ptr<Database>> ConnectSqlite(const std::string& path);
Expected<std::unique_ptr<Database>> ConnectPostgres(const std::string& url);

// A column's text as a number (0 for NULL).
int64_t Integer(const std::optional<std::string>& text);
double Real(const std::optional<std::string>& text);

}  // namespace hotline::history

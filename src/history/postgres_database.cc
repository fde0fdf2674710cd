// The PostgreSQL engine, through libpq: for a team whose CI machines share one database. Writers
// are kept apart by a transaction-scoped advisory lock, so that two machines creating or
// migrating the schema at once do it once.
#include <fmt/core.h>
#include <libpq-fe.h>

#include <regex>

#include "history/database.h"

namespace hotline::history {
namespace {

// hotline's advisory lock: any number, the same in every hotline ("hotline" in ASCII).
constexpr const char* kLockKey = "29395943403646565";

// The first line of libpq's message, without its "ERROR:  " prefix.
std::string FirstLine(const char* message) {
  std::string text = message ? message : "";
  if (size_t end = text.find('\n'); end != std::string::npos) text.resize(end);
  for (const char* prefix : {"ERROR:  ", "FATAL:  "})
    if (text.starts_with(prefix)) text.erase(0, std::string(prefix).size());
  return text.empty() ? "unknown error" : text;
}

// The URL as messages may show it: its password replaced by ***.
std::string WithoutPassword(const std::string& url) {
  static const std::regex password(R"(^([a-z]+://[^:/@]*:)[^@]*@)");
  std::string shown = std::regex_replace(url, password, "$1***@");
  static const std::regex query_password(R"(([?&]password=)[^&]*)");
  return std::regex_replace(shown, query_password, "$1***");
}

class PostgresDatabase final : public Database {
 public:
  explicit PostgresDatabase(const std::string& url) : url_(url) { name_ = WithoutPassword(url); }
  ~PostgresDatabase() override { PQfinish(connection_); }

  Status Open() {
    connection_ = PQconnectdb(url_.c_str());
    if (!connection_) return Status::Error(fmt::format("{}: out of memory", name_));
    if (PQstatus(connection_) != CONNECTION_OK)
      return Status::Error(
          fmt::format("{}: cannot connect: {}", name_, FirstLine(PQerrorMessage(connection_))));
    // NOTICEs ("relation already exists, skipping") are not for the user's terminal.
    PQsetNoticeProcessor(
        connection_, [](void*, const char*) {}, nullptr);
    return Run("SET client_min_messages = warning");
  }

  Status Execute(std::string_view sql, std::span<const Value> params,
                 std::vector<Row>* rows) override {
    std::vector<std::string> texts(params.size());
    std::vector<const char*> values(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      if (const auto* n = std::get_if<int64_t>(&params[i])) {
        texts[i] = std::to_string(*n);
      } else if (const auto* d = std::get_if<double>(&params[i])) {
        texts[i] = fmt::format("{}", *d);
      } else if (const auto* s = std::get_if<std::string>(&params[i])) {
        texts[i] = *s;
      } else {
        continue;  // NULL
      }
      values[i] = texts[i].c_str();
    }
    std::string text(sql);
    PGresult* result = PQexecParams(connection_, text.c_str(), static_cast<int>(params.size()),
                                    nullptr, values.data(), nullptr, nullptr, 0);
    ExecStatusType status = PQresultStatus(result);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      Status failed = Status::Error(fmt::format(
          "{}: {}", name_,
          FirstLine(result ? PQresultErrorMessage(result) : PQerrorMessage(connection_))));
      PQclear(result);
      return failed;
    }
    if (rows)
      for (int r = 0, n = PQntuples(result); r < n; ++r) {
        Row row;
        for (int c = 0, m = PQnfields(result); c < m; ++c)
          if (PQgetisnull(result, r, c))
            row.emplace_back(std::nullopt);
          else
            row.emplace_back(std::string(PQgetvalue(result, r, c),
                                         static_cast<size_t>(PQgetlength(result, r, c))));
        rows->push_back(std::move(row));
      }
    PQclear(result);
    return Status();
  }

  Status BeginWrite() override {
    if (Status s = Run("BEGIN"); !s.ok()) return s;
    return Run(fmt::format("SELECT pg_advisory_xact_lock({})", kLockKey));
  }
  Status Commit() override { return Run("COMMIT"); }
  void Rollback() override { (void)Run("ROLLBACK"); }

  Expected<std::vector<std::string>> Tables() override {
    std::vector<Row> rows;
    if (Status s = Run("SELECT tablename FROM pg_catalog.pg_tables "
                       "WHERE schemaname = current_schema()",
                       {}, &rows);
        !s.ok())
      return s;
    std::vector<std::string> names;
    for (const Row& r : rows) names.push_back(r[0].value_or(""));
    return names;
  }

  Engine engine() const override { return Engine::kPostgres; }

 private:
  std::string url_;
  PGconn* connection_ = nullptr;
};

}  // namespace

Expected<std::unique_ptr<Database>> ConnectPostgres(const std::string& url) {
  auto db = std::make_unique<PostgresDatabase>(url);
  if (Status s = db->Open(); !s.ok()) return s;
  return std::unique_ptr<Database>(std::move(db));
}

}  // namespace hotline::history

// The PostgreSQL engine, through libpq: for a team whose CI machines share one database. Writers
// are kept apart by a transaction-scoped advisory lock, so that two machines creating or
// migrating the schema at once do it once.
//
// libpq is opened when a database URL is first used, not linked: it brings some twenty libraries
// (Kerberos, LDAP, GnuTLS, OpenSSL) whose loading and constructors cost every hotline process
// about 2 ms, and `hotline record`'s process lives as long as the profiled program.
#include <dlfcn.h>
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

// The libpq functions used here, found in the library once it is opened.
struct LibPq {
  decltype(&::PQconnectdb) PQconnectdb;
  decltype(&::PQstatus) PQstatus;
  decltype(&::PQerrorMessage) PQerrorMessage;
  decltype(&::PQsetNoticeProcessor) PQsetNoticeProcessor;
  decltype(&::PQexecParams) PQexecParams;
  decltype(&::PQresultStatus) PQresultStatus;
  decltype(&::PQresultErrorMessage) PQresultErrorMessage;
  decltype(&::PQntuples) PQntuples;
  decltype(&::PQnfields) PQnfields;
  decltype(&::PQgetisnull) PQgetisnull;
  decltype(&::PQgetvalue) PQgetvalue;
  decltype(&::PQgetlength) PQgetlength;
  decltype(&::PQclear) PQclear;
  decltype(&::PQfinish) PQfinish;
};

template <typename F>
bool Find(void* library, const char* name, F& function) {
  function = reinterpret_cast<F>(dlsym(library, name));
  return function != nullptr;
}

// Opened once per process; never closed (its atexit handlers would outlive it).
Expected<const LibPq*> OpenLibPq() {
  static LibPq pq;
  static std::string error = [] {
    void* library = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (!library)
      return std::string("PostgreSQL history needs libpq (apt-get install libpq5): ") + dlerror();
    bool found =
        Find(library, "PQconnectdb", pq.PQconnectdb) && Find(library, "PQstatus", pq.PQstatus) &&
        Find(library, "PQerrorMessage", pq.PQerrorMessage) &&
        Find(library, "PQsetNoticeProcessor", pq.PQsetNoticeProcessor) &&
        Find(library, "PQexecParams", pq.PQexecParams) &&
        Find(library, "PQresultStatus", pq.PQresultStatus) &&
        Find(library, "PQresultErrorMessage", pq.PQresultErrorMessage) &&
        Find(library, "PQntuples", pq.PQntuples) && Find(library, "PQnfields", pq.PQnfields) &&
        Find(library, "PQgetisnull", pq.PQgetisnull) &&
        Find(library, "PQgetvalue", pq.PQgetvalue) &&
        Find(library, "PQgetlength", pq.PQgetlength) && Find(library, "PQclear", pq.PQclear) &&
        Find(library, "PQfinish", pq.PQfinish);
    return found ? std::string() : std::string("libpq.so.5 lacks a function: ") + dlerror();
  }();
  if (!error.empty()) return Status::Error(error);
  return &pq;
}

class PostgresDatabase final : public Database {
 public:
  PostgresDatabase(const LibPq& pq, const std::string& url) : pq_(pq), url_(url) {
    name_ = WithoutPassword(url);
  }
  ~PostgresDatabase() override { pq_.PQfinish(connection_); }

  Status Open() {
    connection_ = pq_.PQconnectdb(url_.c_str());
    if (!connection_) return Status::Error(fmt::format("{}: out of memory", name_));
    if (pq_.PQstatus(connection_) != CONNECTION_OK)
      return Status::Error(
          fmt::format("{}: cannot connect: {}", name_, FirstLine(pq_.PQerrorMessage(connection_))));
    // NOTICEs ("relation already exists, skipping") are not for the user's terminal.
    pq_.PQsetNoticeProcessor(
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
    PGresult* result = pq_.PQexecParams(connection_, text.c_str(), static_cast<int>(params.size()),
                                        nullptr, values.data(), nullptr, nullptr, 0);
    ExecStatusType status = pq_.PQresultStatus(result);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      Status failed = Status::Error(fmt::format(
          "{}: {}", name_,
          FirstLine(result ? pq_.PQresultErrorMessage(result) : pq_.PQerrorMessage(connection_))));
      pq_.PQclear(result);
      return failed;
    }
    if (rows)
      for (int r = 0, n = pq_.PQntuples(result); r < n; ++r) {
        Row row;
        for (int c = 0, m = pq_.PQnfields(result); c < m; ++c)
          if (pq_.PQgetisnull(result, r, c))
            row.emplace_back(std::nullopt);
          else
            row.emplace_back(std::string(pq_.PQgetvalue(result, r, c),
                                         static_cast<size_t>(pq_.PQgetlength(result, r, c))));
        rows->push_back(std::move(row));
      }
    pq_.PQclear(result);
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
  const LibPq& pq_;
  std::string url_;
  PGconn* connection_ = nullptr;
};

}  // namespace

Expected<std::unique_ptr<Database>> ConnectPostgres(const std::string& url) {
  Expected<const LibPq*> pq = OpenLibPq();
  if (!pq) return pq.status();
  auto db = std::make_unique<PostgresDatabase>(**pq, url);
  if (Status s = db->Open(); !s.ok()) return s;
  return std::unique_ptr<Database>(std::move(db));
}

}  // namespace hotline::history

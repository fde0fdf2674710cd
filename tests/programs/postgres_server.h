// A PostgreSQL server of the tests' own: initdb and pg_ctl in a scratch folder, listening on a
// Unix socket there only (no TCP port to collide with), stopped when the tests end. Under root,
// whom initdb refuses, the server runs as the `postgres` user the Debian package creates.
#pragma once

#include <string>
#include <vector>

namespace hotline::testing {

class PostgresServer {
 public:
  // The one server of this test program, started at the first call.
  static PostgresServer& Shared();

  // Why there is no server (PostgreSQL not installed, or it would not start); empty when up.
  const std::string& unavailable() const { return unavailable_; }
  // A new, empty database on the server, as a postgresql:// URL.
  std::string NewDatabase(const std::string& name);
  void Stop();

 private:
  PostgresServer();
  std::string RunTool(const std::string& tool, const std::vector<std::string>& args);

  std::string bin_, dir_, user_;
  int port_ = 0;
  bool as_postgres_ = false;
  std::string unavailable_;
};

}  // namespace hotline::testing

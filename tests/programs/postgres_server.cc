#include "postgres_server.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "harness.h"

namespace hotline::testing {
namespace {

namespace fs = std::filesystem;

// The newest installed PostgreSQL's programs: /usr/lib/postgresql/N/bin.
std::string FindBin() {
  std::string best;
  int best_version = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    int version = std::atoi(e.path().filename().c_str());
    if (version > best_version && fs::exists(e.path() / "bin" / "initdb"))
      best_version = version, best = (e.path() / "bin").string();
  }
  return best;
}

}  // namespace

PostgresServer& PostgresServer::Shared() {
  static PostgresServer* server = [] {
    auto* s = new PostgresServer;
    std::atexit([] { Shared().Stop(); });
    return s;
  }();
  return *server;
}

std::string PostgresServer::RunTool(const std::string& tool, const std::vector<std::string>& args) {
  std::vector<std::string> argv;
  if (as_postgres_) argv = {"/usr/sbin/runuser", "-u", "postgres", "--"};
  argv.push_back(bin_ + "/" + tool);
  argv.insert(argv.end(), args.begin(), args.end());
  RunResult r = Execute(argv, dir_);
  return r.exit_code == 0 ? "" : tool + " failed (" + std::to_string(r.exit_code) + "): " + r.err;
}

PostgresServer::PostgresServer() {
  bin_ = FindBin();
  if (bin_.empty()) {
    unavailable_ = "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb)";
    return;
  }
  dir_ = ScratchDir("postgres");
  as_postgres_ = geteuid() == 0;
  if (as_postgres_) {
    const passwd* pw = getpwnam("postgres");
    if (!pw) {
      unavailable_ = "running as root and there is no postgres user to run the server as";
      return;
    }
    if (chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
      unavailable_ = "cannot give " + dir_ + " to the postgres user";
      return;
    }
  }
  user_ = "hotline";
  port_ = 20000 + getpid() % 20000;
  std::string data = dir_ + "/data";
  if (std::string e =
          RunTool("initdb", {"-D", data, "-A", "trust", "-U", user_, "-E", "UTF8", "--no-sync"});
      !e.empty()) {
    unavailable_ = e;
    return;
  }
  std::string options =
      "-k " + dir_ + " -p " + std::to_string(port_) + " -c listen_addresses='' -c fsync=off";
  if (std::string e = RunTool("pg_ctl", {"-D", data, "-l", dir_ + "/server.log", "-o", options,
                                         "-w", "-t", "60", "start"});
      !e.empty())
    unavailable_ = e;
}

std::string PostgresServer::NewDatabase(const std::string& name) {
  if (std::string e =
          RunTool("createdb", {"-h", dir_, "-p", std::to_string(port_), "-U", user_, name});
      !e.empty())
    return "";
  return "postgresql:///" + name + "?host=" + dir_ + "&port=" + std::to_string(port_) +
         "&user=" + user_;
}

void PostgresServer::Stop() {
  if (!unavailable_.empty() || bin_.empty()) return;
  RunTool("pg_ctl", {"-D", dir_ + "/data", "-m", "fast", "-w", "stop"});
  unavailable_ = "stopped";
}

}  // namespace hotline::testing

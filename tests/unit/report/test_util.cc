#include "test_util.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace hotline::testing {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

namespace {

// This process's scratch folder, removed when the test binary exits if every test passed (a
// failed one's is kept to look at). ctest runs each test in a process of its own, so a folder per
// process left behind would pile up by the thousand.
struct ProcessScratch {
  std::filesystem::path root;
  ProcessScratch() {
    const char* tmp = std::getenv("TMPDIR");
    root = std::filesystem::path(tmp && *tmp ? tmp : "/tmp") /
           ("hotline-report-test-" + std::to_string(getpid()));
  }
  ~ProcessScratch() {
    if (!::testing::UnitTest::GetInstance()->Passed()) return;
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  }
};

}  // namespace

std::string ScratchDir(const std::string& name) {
  static ProcessScratch scratch;
  std::filesystem::path dir = scratch.root / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

RunResult RunShell(const std::string& command, const std::string& dir) {
  std::string scratch = ScratchDir("run");
  std::string out = scratch + "/stdout", err = scratch + "/stderr";
  std::string full =
      (dir.empty() ? "" : "cd '" + dir + "' && ") + command + " >'" + out + "' 2>'" + err + "'";
  int status = std::system(full.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  return r;
}

std::string Normalise(const std::string& text) {
  static const std::regex path(R"((?:/[^/\s\]:]+)+/([^/\s\]:]+))");
  static const std::regex time(R"(\b\d+(?:\.\d+)?(?:ns|us|ms|s)\b)");
  static const std::regex percent(R"(\b\d+\.\d\d\b)");
  static const std::regex address(R"(0x[0-9a-fA-F]+)");
  std::string s = std::regex_replace(text, path, "$1");
  s = std::regex_replace(s, time, "<time>");
  s = std::regex_replace(s, percent, "<pct>");
  s = std::regex_replace(s, address, "<addr>");
  // Column padding follows the widths of what was replaced: runs of spaces become one gap.
  static const std::regex edges(R"(^ +| +$)", std::regex::ECMAScript | std::regex::multiline);
  static const std::regex gaps(R"( {2,})");
  s = std::regex_replace(s, edges, "");
  return std::regex_replace(s, gaps, "  ");
}

}  // namespace hotline::testing

#include "record/perl.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>

#include "record/launch.h"

namespace hotline::record {
namespace {

bool IsPerlName(const std::string& path) {
  static const std::regex perl("perl[0-9.]*");
  return std::regex_match(std::filesystem::path(path).filename().string(), perl);
}

// Devel::Hotline beside this executable when it runs from a build folder (build/bin/hotline →
// build/frontends/perl/lib); empty when the installed copy (in perl's vendor dirs) is to be used.
std::string BuildModuleDir() {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {};
  self[n] = '\0';
  std::filesystem::path lib =
      std::filesystem::path(self).parent_path().parent_path() / "frontends" / "perl" / "lib";
  std::error_code ec;
  return std::filesystem::exists(lib / "Devel" / "Hotline.pm", ec) ? lib.string() : std::string();
}

void Prepend(const char* name, const std::string& value, const char* separator) {
  const char* old = getenv(name);
  std::string joined = old && *old ? value + separator + old : value;
  setenv(name, joined.c_str(), 1);
}

}  // namespace

std::string ScriptInterpreter(const std::string& path) {
  std::ifstream in(path);
  std::string first;
  if (!in || !std::getline(in, first) || first.rfind("#!", 0) != 0) return "";
  std::vector<std::string> words;
  size_t i = 2;
  while (i < first.size()) {
    while (i < first.size() && (first[i] == ' ' || first[i] == '\t')) ++i;
    size_t start = i;
    while (i < first.size() && first[i] != ' ' && first[i] != '\t') ++i;
    if (i > start) words.push_back(first.substr(start, i - start));
  }
  if (words.empty()) return "";
  if (std::filesystem::path(words[0]).filename() == "env" && words.size() > 1) return words[1];
  return words[0];
}

bool IsPerlProgram(const std::string& path) {
  return IsPerlName(path) || IsPerlName(ScriptInterpreter(path));
}

bool IsPythonProgram(const std::string& path) {
  static const std::regex python("python[0-9.]*");
  auto named = [](const std::string& p) {
    return std::regex_match(std::filesystem::path(p).filename().string(), python);
  };
  return named(path) || named(ScriptInterpreter(path));
}

Expected<int> RecordPerlProgram(const std::string& path, const std::vector<std::string>& command,
                                const std::string& output, uint64_t sample_period_ns) {
  int error[2];
  if (pipe2(error, O_CLOEXEC) != 0) return Status::Error(std::string("pipe: ") + strerror(errno));
  pid_t child = fork();
  if (child < 0) {
    int err = errno;
    close(error[0]);
    close(error[1]);
    return Status::Error("cannot start " + command[0] + ": " + strerror(err));
  }
  if (child == 0) {
    close(error[0]);
    if (std::string lib = BuildModuleDir(); !lib.empty()) Prepend("PERL5LIB", lib, ":");
    Prepend("PERL5OPT", "-d:Hotline", " ");
    setenv("HOTLINE_OUTPUT", output.c_str(), 1);
    if (sample_period_ns > 0) {
      setenv("HOTLINE_PERL_SAMPLE", std::to_string(sample_period_ns).c_str(), 1);
    } else {
      unsetenv("HOTLINE_PERL_SAMPLE");
    }
    setenv("HOTLINE_ROOT_PID", std::to_string(getppid()).c_str(), 1);
    std::vector<char*> argv;
    for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(path.c_str(), argv.data());
    int err = errno;
    (void)!write(error[1], &err, sizeof err);
    _exit(127);
  }
  close(error[1]);
  int status = WaitForProgramStatus(child);
  int exec_errno = 0;
  bool failed = read(error[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno;
  close(error[0]);
  if (failed) return Status::Error("cannot run " + command[0] + ": " + strerror(exec_errno));
  return status;
}

}  // namespace hotline::record

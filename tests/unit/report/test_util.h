// Shared by the report tests: running the hotline binary, a scratch directory, the normaliser.
#pragma once

#include <string>

namespace hotline::testing {

struct RunResult {
  int exit_code = -1;
  std::string out, err;
};

// Runs `command` through /bin/sh in `dir` (if not empty), capturing stdout and stderr.
RunResult RunShell(const std::string& command, const std::string& dir = "");
// A fresh directory under $TMPDIR (or /tmp) for one test.
std::string ScratchDir(const std::string& name);
std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& data);
// Makes report output comparable across machines and checkouts: absolute paths keep only their
// file name; times, percentages and hex addresses become <time>, <pct>, <addr>.
std::string Normalise(const std::string& text);

}  // namespace hotline::testing

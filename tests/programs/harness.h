// Running real programs in tests: without a shell, capturing stdout and stderr, each in a
// scratch directory of its own; and reading the profiles they leave.
#pragma once

#include <string>
#include <vector>

#include "format/raw_profile.h"

namespace hotline::testing {

struct RunResult {
  std::string out, err;
  int exit_code = -1;  // as a shell reports it: 128+N for a death by signal N
};

// Runs argv (no shell) in `dir`, capturing stdout and stderr.
RunResult Execute(const std::vector<std::string>& argv, const std::string& dir);
// A fresh directory under $TMPDIR (or /tmp).
std::string ScratchDir(const std::string& name);
// The *.hotline files in `dir`, sorted.
std::vector<std::string> ProfilesIn(const std::string& dir);
// Reads a profile, failing the test if it cannot be read or is damaged.
format::RawProfile Load(const std::string& path);
// The program's threads: not the runtime's own (which only the kernel sampler records).
size_t ProgramThreads(const format::RawProfile& profile);
// Runs `hotline ARGS...` in `dir`.
RunResult Hotline(const std::vector<std::string>& args, const std::string& dir);
// Whether `program` is on PATH (a peer or a toolchain a test compares with or builds with).
bool Installed(const std::string& program);

struct Recorded {
  RunResult plain, profiled;
  std::string dir, profile;
  std::string plain_dir;  // where the plain run ran
};

// Runs `argv` plain, then under `hotline record -q -o DIR/p.hotline [record_options] --`, each in
// a directory of its own, and checks both behaved the same (output, errors, exit status).
Recorded RecordAndCompare(const std::string& name, const std::vector<std::string>& argv,
                          const std::vector<std::string>& record_options = {});

}  // namespace hotline::testing

// Running a helper program (gcov, git) and reading what it prints.
#pragma once

#include <string>
#include <vector>

namespace hotline::base {

// Runs argv (looked up on PATH) in `dir` with its stdout captured into *out and its stderr
// dropped. Returns its exit status, -1 when it could not run or did not exit.
int Capture(const std::vector<std::string>& argv, const std::string& dir, std::string* out);

}  // namespace hotline::base

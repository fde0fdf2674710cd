// What the commands that run a program or write several files at once share.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/status.h"

namespace hotline::cli {

// Waits for `child` (a program hotline started for the user), leaving the terminal's Ctrl-C and
// Ctrl-\ to it meanwhile. Returns its exit code as a shell reports it: 128+N for a death by
// signal N.
int WaitForProgram(pid_t child);

// The files one after another, written to `output` whole or not at all.
Status WriteConcatenation(const std::vector<std::string>& files, const std::string& output);

}  // namespace hotline::cli

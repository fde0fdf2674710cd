// What `hotline record` must know about a program before running it: where it is, whether it
// can run, whether LD_PRELOAD can reach it, and how it was instrumented.
#pragma once

#include <string>

#include "base/status.h"

namespace hotline::cli {

struct ProgramInfo {
  std::string path;           // as execve will be given it
  bool is_elf = false;        // false: a script; its interpreter is what gets profiled
  bool is_static = false;     // no program interpreter: LD_PRELOAD cannot work
  bool instrumented = false;  // imports __cyg_profile_func_enter (-finstrument-functions)
  bool gprof = false;         // imports mcount (-pg)
};

// Finds `name` as execvp would (PATH unless it contains a slash) and inspects it. Errors say
// "NAME: no such program" or "NAME: not executable" and carry the exit code a shell uses
// (127, 126) through *exit_code.
// A static program is refused unless `static_ok` (it is sampled from outside, which needs no
// preloaded runtime).
Expected<ProgramInfo> InspectProgram(const std::string& name, int* exit_code, bool static_ok);

}  // namespace hotline::cli

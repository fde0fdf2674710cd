// What `hotline record` must know about a program before running it: where it is, whether it
// can run, whether a preloaded library can reach it, and whether anything in it needs the
// runtime inside the process (DESIGN.md rule 1: by default nothing enters the program).
#pragma once

#include <string>

#include "base/status.h"

namespace hotline::record {

struct ProgramInfo {
  std::string path;        // as execve will be given it
  bool is_elf = false;     // false: a script; its interpreter is what runs
  bool is_static = false;  // no program interpreter: LD_PRELOAD cannot reach it
  // -finstrument-functions: the program or a library it links imports __cyg_profile_func_enter.
  bool instrumented = false;
  // The program or a library it links calls hotline's C API (include/hotline/hotline.h looks
  // the runtime up by name: the names are in its read-only data).
  bool calls_api = false;
  bool gprof = false;  // imports mcount (-pg)
};

// Finds `name` as execvp would (PATH unless it contains a slash) and inspects it, with the
// libraries the dynamic loader would give it. Errors say "NAME: no such program" or "NAME: not
// executable" and carry the exit code a shell uses (127, 126) through *exit_code.
Expected<ProgramInfo> InspectProgram(const std::string& name, int* exit_code);

}  // namespace hotline::record

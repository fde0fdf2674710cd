// `hotline record -- perl x.pl`: a perl program is profiled by Devel::Hotline (frontends/perl),
// which writes the profile itself, statement by statement or (--perl-sample) by sampling its Perl
// stack; the native sampler stays off so that the profile holds one coherent stream
// (docs/perl.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace hotline::record {

// The interpreter the #! line of the script at `path` names (through env too), or "".
std::string ScriptInterpreter(const std::string& path);

// True when `path` (as InspectProgram resolved it) is perl, or a script whose #! line runs perl
// (directly or through env).
bool IsPerlProgram(const std::string& path);

// The same for python: profiled as native code (no Python front-end yet; docs/interpreters.md).
bool IsPythonProgram(const std::string& path);

// Runs `command` with Devel::Hotline loaded through PERL5OPT (and PERL5LIB pointing at the
// build's copy when hotline runs from its build folder), writing `output`. Returns the program's
// wait status. `sample_period_ns` > 0 asks for the sampling mode, one sample per that much CPU
// time; 0 measures every statement.
Expected<int> RecordPerlProgram(const std::string& path, const std::vector<std::string>& command,
                      const std::string& output, uint64_t sample_period_ns);

}  // namespace hotline::record

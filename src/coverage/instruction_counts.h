// Callgrind's cost, instructions executed (Ir), per source line and per function, from a gcc
// `--coverage` run: the machine code's basic blocks (capstone), the values of the arc counters
// the run left in its .gcda files at the places the code increments them, and flow conservation
// (what enters a block leaves it) for the blocks that hold no counter. Blocks whose counts the
// counters and the flow do not determine are not guessed: of a function's or line's sum over
// them, the least every solution gives is counted and the rest is "uncounted" (a linear
// program's range). docs/coverage.md states the model and its limits.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"

namespace hotline::coverage {

struct LineInstructions {
  std::string function;  // whose machine code this is (demangled)
  std::string file;      // as the line table names it, made absolute and normal
  uint32_t line = 0;
  // Instructions of the line's code executed: exactly, or at least this many where blocks the
  // counters do not determine could have run `uncounted` more.
  uint64_t executed = 0;
  uint64_t uncounted = 0;
  bool unbounded = false;  // and an uncounted loop, which may have run any number of times
};

struct FunctionInstructions {
  std::string file, name;  // name demangled (as gcov names it); file: of its first instruction
  uint64_t executed = 0, uncounted = 0;
  bool unbounded = false;
};

struct InstructionCounts {
  std::vector<LineInstructions> lines;  // by function, file, then line
  std::vector<FunctionInstructions> functions;
  uint64_t counter_increments = 0;  // executions of the counters' own increments (in `executed`)
  // Functions with counters whose code could not be followed: counters kept in registers (a
  // build without -fprofile-update=atomic), a jump table not found, counts that contradict the
  // flow (an exception or longjmp out of a call). Their instructions are in no figure.
  std::vector<std::string> not_counted;
};

// gcc: `gcda_file` gives where this run's counters of an object file are, from the .gcda name
// the object was compiled with (gcov_info's filename); "" when the run left none.
Expected<InstructionCounts> CountInstructions(
    const std::string& binary, const std::function<std::string(const std::string&)>& gcda_file);

// clang (-fprofile-instr-generate): the raw profiles the run's processes wrote.
Expected<InstructionCounts> CountInstructionsClang(const std::string& binary,
                                                   const std::vector<std::string>& profraws);

}  // namespace hotline::coverage

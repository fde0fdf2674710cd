// What a binary's machine code is made of, per function and source line: how many instructions
// each line compiles to, and which functions each line calls directly. The weights of Knuth's
// cost = weight × frequency, read with libelf, libdw (line tables) and capstone (x86-64).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace hotline::symbolize {

struct CodeLine {
  std::string file;  // as the line table names it (absolute when the compiler recorded it so)
  uint32_t line = 0;
  uint32_t instructions = 0;
};

struct CodeCall {
  std::string file;
  uint32_t line = 0;
  std::string callee;         // the called function's symbol name, demangled
  uint32_t instructions = 1;  // call instructions to it on that line
};

struct CodeFunction {
  std::string name;  // symbol name, demangled (as gcov's demangled_name)
  std::vector<CodeLine> lines;
  std::vector<CodeCall> calls;
};

struct CodeMap {
  std::vector<CodeFunction> functions;
};

// Disassembles every function symbol of the executable sections of `path`. Fails when the file
// cannot be read, is not x86-64 ELF or has no line table.
Expected<CodeMap> BuildCodeMap(const std::string& path);

}  // namespace hotline::symbolize

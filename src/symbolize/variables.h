// Global and static variables by their source names → address, size and type, read from a
// program's DWARF with libdw: what `hotline record --watch` needs before the program runs.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace hotline::symbolize {

enum class VariableKind { kSigned, kUnsigned, kFloat, kPointer, kEnum, kBool };

struct Variable {
  std::string name;      // as asked: `counter` or `file.c:counter`
  uint64_t address = 0;  // ELF virtual address (a PIE's: add its load bias)
  uint64_t size = 0;     // bytes
  VariableKind kind = VariableKind::kSigned;
  std::string type_name;  // the type as written, for messages: "long", "enum color", "double"
  std::vector<std::pair<int64_t, std::string>> enumerators;  // kEnum: (value, name)
  std::string file;                                          // the compilation unit that defines it
  uint32_t line = 0;                                         // where it is declared
};

// Finds `spec` (`NAME`, `FILE:NAME`: FILE matches the end of the defining unit's or the
// declaration's file name, `ns::name` for C++) among the variables with a fixed address in
// `program`'s debug information (its own, or a separate debug file it names). Errors say what
// is wrong in one line: no debug information, no such variable, defined in several files
// (naming them), no fixed address (a local or thread-local), not a scalar.
Expected<Variable> FindVariable(const std::string& program, const std::string& spec);

}  // namespace hotline::symbolize

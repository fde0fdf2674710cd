// An x86-64 ELF file opened for its machine code and DWARF: what the code map and coverage's
// instruction counts read. Closed with the object.
#pragma once

#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>

#include <functional>
#include <memory>
#include <string>

#include "base/status.h"

namespace hotline::symbolize {

struct DebugBinary {
  int fd = -1;
  Elf* elf = nullptr;
  Dwarf* dwarf = nullptr;
  DebugBinary() = default;
  DebugBinary(const DebugBinary&) = delete;
  DebugBinary& operator=(const DebugBinary&) = delete;
  ~DebugBinary();
};

// Every defined symbol of the file's symbol table (.symtab), with its name.
void ForEachSymbol(Elf* elf, const std::function<void(const GElf_Sym&, const char* name)>& use);

// Fails, naming the file, when it cannot be read, is not x86-64 ELF or has no debug info;
// `use` says what it was opened for ("weighed", "counted").
Expected<std::unique_ptr<DebugBinary>> OpenDebugBinary(const std::string& path,
                                                       const std::string& use);

}  // namespace hotline::symbolize

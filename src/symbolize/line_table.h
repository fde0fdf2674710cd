// Every row of a binary's DWARF line tables, sorted by address, for tools that walk its machine
// code instruction by instruction (the code map's weights, coverage's instruction counts).
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace hotline::symbolize {

struct LineRow {
  uint64_t address;
  const char* file;  // null: an end of sequence, no code from here
  uint32_t line;
};

// Row i covers [address_i, address_i+1). The file names live as long as `dwarf`.
std::vector<LineRow> LineRows(Dwarf* dwarf);

// The row covering `address`, or null where no code of a line is.
const LineRow* RowAt(const std::vector<LineRow>& rows, uint64_t address);

// A line table's file name as a path without `..` (dwarf_linesrc joins the compilation
// directory and the name as the compiler wrote it), as gcov's counts name files. Each name is
// made once.
class FileNames {
 public:
  const std::string& of(const char* name);

 private:
  std::unordered_map<const char*, std::string> names_;
};

}  // namespace hotline::symbolize

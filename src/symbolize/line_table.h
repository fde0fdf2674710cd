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
  const char* directory;  // the unit's compilation directory, which a relative `file` is under
};

// Row i covers [address_i, address_i+1). The file names live as long as `dwarf`.
std::vector<LineRow> LineRows(Dwarf* dwarf);

// The row covering `address`, or null where no code of a line is.
const LineRow* RowAt(const std::vector<LineRow>& rows, uint64_t address);

// A row's file as an absolute path without `..` (`gcc ../x.c` leaves the name relative to the
// compilation directory), as gcov's counts name files. Each name is made once.
class FileNames {
 public:
  const std::string& of(const LineRow& row);

 private:
  std::unordered_map<const char*, std::string> names_;
};

}  // namespace hotline::symbolize

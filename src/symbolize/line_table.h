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

// One spelling per file: relative names are taken against the compilation directory and `.`,
// `..` and doubled slashes are folded lexically, so that the same header reached from two
// compilation units (`/src/a/../inc/x.h`, `/src/inc/x.h`) is one file to the model. libdw
// already prefixes entries of directory 0, which is the compilation directory itself; when that
// is relative (glibc's `./stdlib`) the name starts with it and must not get it twice.
std::string NormalPath(const char* name, const std::string& comp_dir);

// A row's file as NormalPath spells it (`gcc ../x.c` leaves the name relative to the
// compilation directory), as the symbolizer and gcov's counts name files. Each name is made once.
class FileNames {
 public:
  const std::string& of(const LineRow& row);

 private:
  std::unordered_map<const char*, std::string> names_;
};

}  // namespace hotline::symbolize

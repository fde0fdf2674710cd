// How a module's DWARF is found by address. Function scopes are not looked up with
// dwarf_getscopes, which walks the compilation unit's DIEs again for every address: instead each
// compilation unit is indexed once, on first use, into a tree of address ranges (subprograms and
// the inlined subroutines inside them), so an address costs a few binary searches. Internal to
// src/symbolize (dwarf_index.cc builds the index, symbolizer.cc and function_names.cc read it).
#pragma once

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace hotline::symbolize {

// A set of [low, high) address ranges, each naming an entry (a compilation unit or a scope).
// Ranges of well-formed DWARF do not overlap at one level, but damaged or unusual producers can
// make them overlap, so lookup does not assume it: it walks back from the last range starting at
// or below the address while an earlier range could still reach it (the running maximum of `high`
// says when none can).
class RangeIndex {
 public:
  void add(uint64_t low, uint64_t high, uint32_t entry) {
    if (high > low) ranges_.push_back({low, high, entry});
  }

  void finish() {
    std::sort(ranges_.begin(), ranges_.end(),
              [](const Range& a, const Range& b) { return a.low < b.low; });
    max_high_.resize(ranges_.size());
    uint64_t running = 0;
    for (size_t i = 0; i < ranges_.size(); ++i) {
      running = std::max(running, ranges_[i].high);
      max_high_[i] = running;
    }
  }

  // The entry of a range containing `pc` (the one starting closest below it), if any.
  std::optional<uint32_t> find(uint64_t pc) const {
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), pc,
                               [](uint64_t value, const Range& r) { return value < r.low; });
    for (size_t i = static_cast<size_t>(it - ranges_.begin()); i-- > 0;) {
      if (max_high_[i] <= pc) break;
      if (ranges_[i].high > pc) return ranges_[i].entry;
    }
    return std::nullopt;
  }

  template <typename Visit>
  void forEach(Visit visit) const {
    for (const Range& r : ranges_) visit(r.low, r.high);
  }

 private:
  struct Range {
    uint64_t low;
    uint64_t high;
    uint32_t entry;
  };
  std::vector<Range> ranges_;
  std::vector<uint64_t> max_high_;
};

inline constexpr int32_t kNoScope = -1;

// A function-level scope with code: a subprogram (out-of-line function) or an inlined
// subroutine. Its name and definition site are computed on first use and kept, so a function
// hit by many addresses is named and demangled once.
struct Scope {
  Dwarf_Die die;
  int32_t parent = kNoScope;  // the enclosing scope with code, kNoScope at the top
  bool inlined = false;
  RangeIndex children;
  bool described = false;
  std::string name;
  std::string decl_file;
  uint32_t decl_line = 0;
};

struct CompileUnit {
  Dwarf_Die die;
  bool indexed = false;
  int language = 0;
  std::string comp_dir;
  std::vector<Scope> scopes;
  RangeIndex top;  // scopes not nested in another scope with code
  // Out-of-line subprograms by the offset of their abstract origin (outOfLineCopy), built once.
  bool copies_indexed = false;
  std::unordered_map<Dwarf_Off, int32_t> out_of_line_copies;
};

// A string attribute of `die`, through DW_AT_abstract_origin and DW_AT_specification when
// `integrate`; null when it has none.
const char* stringAttribute(Dwarf_Die* die, unsigned int name, bool integrate);

}  // namespace hotline::symbolize

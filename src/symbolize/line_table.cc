#include "symbolize/line_table.h"

#include <dwarf.h>

#include <algorithm>
#include <filesystem>

namespace hotline::symbolize {

std::vector<LineRow> LineRows(Dwarf* dwarf) {
  std::vector<LineRow> rows;
  Dwarf_Off offset = 0, next;
  size_t header;
  while (dwarf_nextcu(dwarf, offset, &next, &header, nullptr, nullptr, nullptr) == 0) {
    Dwarf_Die cu;
    if (dwarf_offdie(dwarf, offset + header, &cu)) {
      Dwarf_Attribute attr;
      const char* directory =
          dwarf_attr(&cu, DW_AT_comp_dir, &attr) ? dwarf_formstring(&attr) : nullptr;
      Dwarf_Lines* lines;
      size_t count;
      if (dwarf_getsrclines(&cu, &lines, &count) == 0) {
        for (size_t i = 0; i < count; ++i) {
          Dwarf_Line* l = dwarf_onesrcline(lines, i);
          Dwarf_Addr address;
          int number = 0;
          bool end = false;
          if (!l || dwarf_lineaddr(l, &address) != 0 || dwarf_lineno(l, &number) != 0) continue;
          dwarf_lineendsequence(l, &end);
          const char* file = end ? nullptr : dwarf_linesrc(l, nullptr, nullptr);
          rows.push_back(LineRow{address, file, uint32_t(number), directory});
        }
      }
    }
    offset = next;
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const LineRow& a, const LineRow& b) { return a.address < b.address; });
  return rows;
}

const LineRow* RowAt(const std::vector<LineRow>& rows, uint64_t address) {
  auto it = std::upper_bound(rows.begin(), rows.end(), address,
                             [](uint64_t a, const LineRow& r) { return a < r.address; });
  if (it == rows.begin()) return nullptr;
  --it;
  return it->file ? &*it : nullptr;
}

const std::string& FileNames::of(const LineRow& row) {
  auto [it, added] = names_.try_emplace(row.file);
  if (added) {
    std::filesystem::path path(row.file);
    if (path.is_relative() && row.directory) path = std::filesystem::path(row.directory) / path;
    it->second = path.lexically_normal().string();
  }
  return it->second;
}

}  // namespace hotline::symbolize

#include "symbolize/line_table.h"

#include <dwarf.h>

#include <algorithm>
#include <string_view>

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

std::string NormalPath(const char* name, const std::string& comp_dir) {
  std::string joined;
  std::string_view view(name);
  if (name[0] != '/' && !comp_dir.empty() &&
      !(view.size() > comp_dir.size() && view.starts_with(comp_dir) &&
        view[comp_dir.size()] == '/')) {
    joined = comp_dir;
    joined += '/';
  }
  joined += name;
  const bool absolute = joined[0] == '/';
  std::vector<std::string_view> parts;
  std::string_view rest(joined);
  while (!rest.empty()) {
    size_t slash = rest.find('/');
    std::string_view part = rest.substr(0, slash);
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    if (part.empty() || part == ".") continue;
    if (part == ".." && !parts.empty() && parts.back() != "..") {
      parts.pop_back();
      continue;
    }
    if (part == ".." && absolute) continue;  // "/.." is "/"
    parts.push_back(part);
  }
  std::string result = absolute ? "/" : "";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) result += '/';
    result += parts[i];
  }
  return result.empty() ? std::string(".") : result;
}

const std::string& FileNames::of(const LineRow& row) {
  auto [it, added] = names_.try_emplace(row.file);
  if (added) it->second = NormalPath(row.file, row.directory ? row.directory : "");
  return it->second;
}

}  // namespace hotline::symbolize

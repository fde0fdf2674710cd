#include "analysis/instruction_diff.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace hotline::analysis {
namespace {

struct Side {
  uint64_t executed = 0;
  bool uncounted = false;
};

using Key = std::tuple<std::string, std::string, uint32_t>;  // function, file, line

void Collect(const format::RawProfile& raw, std::map<Key, Side>& functions,
             std::map<Key, Side>& lines, uint64_t& total, bool& uncounted) {
  for (const format::RawFunctionInstructions& f : raw.function_instructions) {
    Side& s = functions[{f.name, f.file, 0}];
    s.executed += f.executed;
    s.uncounted |= f.uncounted > 0 || f.unbounded;
    total += f.executed;
    uncounted |= s.uncounted;
  }
  for (const format::RawLineInstructions& r : raw.line_instructions)
    for (const format::RawLineInstructions::Row& row : r.lines) {
      Side& s = lines[{r.function, r.file, uint32_t(row.line)}];
      s.executed += row.executed;
      s.uncounted |= row.uncounted > 0 || row.unbounded;
    }
}

std::vector<InstructionChange> Changes(const std::map<Key, Side>& base,
                                       const std::map<Key, Side>& next) {
  std::map<Key, InstructionChange> rows;
  auto add = [&](const std::map<Key, Side>& side, bool is_base) {
    for (const auto& [key, s] : side) {
      InstructionChange& c = rows[key];
      std::tie(c.name, c.file, c.line) = key;
      (is_base ? c.base : c.next) = s.executed;
      c.uncounted |= s.uncounted;
    }
  };
  add(base, true);
  add(next, false);
  std::vector<InstructionChange> changes;
  for (auto& [key, c] : rows)
    if (c.base != c.next) changes.push_back(std::move(c));
  auto size = [](const InstructionChange& c) {
    return c.next > c.base ? c.next - c.base : c.base - c.next;
  };
  std::stable_sort(changes.begin(), changes.end(),
                   [&](const auto& a, const auto& b) { return size(a) > size(b); });
  return changes;
}

}  // namespace

bool HasCountedInstructions(const format::RawProfile& raw) {
  return !raw.function_instructions.empty() && raw.samples.empty();
}

InstructionDiff CompareInstructions(const format::RawProfile& base,
                                    const format::RawProfile& next) {
  InstructionDiff d;
  std::map<Key, Side> base_functions, base_lines, new_functions, new_lines;
  Collect(base, base_functions, base_lines, d.base_total, d.uncounted);
  Collect(next, new_functions, new_lines, d.new_total, d.uncounted);
  d.functions = Changes(base_functions, new_functions);
  d.lines = Changes(base_lines, new_lines);
  return d;
}

}  // namespace hotline::analysis

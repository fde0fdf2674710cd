// The DWARF index of a module: which compilation unit covers which addresses, read from the unit
// headers when the module is opened, and each unit's tree of function scopes, read once when an
// address first falls into it.
#include "symbolize/dwarf_index.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "symbolize/symbolizer_impl.h"

namespace hotline::symbolize {

const char* stringAttribute(Dwarf_Die* die, unsigned int name, bool integrate) {
  Dwarf_Attribute attr;
  Dwarf_Attribute* found =
      integrate ? dwarf_attr_integrate(die, name, &attr) : dwarf_attr(die, name, &attr);
  return found == nullptr ? nullptr : dwarf_formstring(found);
}

void Symbolizer::Impl::indexUnits(Module& m) {
  Dwarf_CU* cu = nullptr;
  Dwarf_Half version = 0;
  uint8_t unit_type = 0;
  Dwarf_Die cu_die;
  while (dwarf_get_units(m.dwarf, cu, &cu, &version, &unit_type, &cu_die, nullptr) == 0) {
    if (unit_type != DW_UT_compile || dwarf_tag(&cu_die) != DW_TAG_compile_unit) continue;
    uint32_t index = static_cast<uint32_t>(m.units.size());
    CompileUnit& unit = m.units.emplace_back();
    unit.die = cu_die;
    Dwarf_Addr base = 0, start = 0, end = 0;
    bool has_ranges = false;
    for (ptrdiff_t offset = 0; (offset = dwarf_ranges(&cu_die, offset, &base, &start, &end)) > 0;) {
      m.unit_ranges.add(start, end, index);
      has_ranges = true;
    }
    if (!has_ranges && dwarf_haschildren(&cu_die) > 0) m.rangeless_units.push_back(index);
  }
  m.unit_ranges.finish();
}

void Symbolizer::Impl::indexRangelessUnits(Module& m) {
  m.rangeless_indexed = true;
  for (uint32_t index : m.rangeless_units) {
    CompileUnit& unit = m.units[index];
    if (!unit.indexed) indexScopes(unit);
    unit.top.forEach(
        [&](uint64_t low, uint64_t high) { m.rangeless_ranges.add(low, high, index); });
  }
  m.rangeless_ranges.finish();
}

CompileUnit* Symbolizer::Impl::unitAt(Module& m, uint64_t pc) {
  std::optional<uint32_t> index = m.unit_ranges.find(pc);
  if (!index && !m.rangeless_units.empty()) {
    if (!m.rangeless_indexed) indexRangelessUnits(m);
    index = m.rangeless_ranges.find(pc);
  }
  if (!index) return nullptr;
  CompileUnit& unit = m.units[*index];
  if (!unit.indexed) indexScopes(unit);
  return &unit;
}

void Symbolizer::Impl::indexScopes(CompileUnit& unit) {
  unit.indexed = true;
  unit.language = dwarf_srclang(&unit.die);
  if (const char* dir = stringAttribute(&unit.die, DW_AT_comp_dir, false)) unit.comp_dir = dir;
  struct Pending {
    Dwarf_Die die;
    int32_t owner;
  };
  std::vector<Pending> stack{{unit.die, kNoScope}};
  while (!stack.empty()) {
    Pending current = stack.back();
    stack.pop_back();
    Dwarf_Die child;
    if (dwarf_child(&current.die, &child) != 0) continue;
    Dwarf_Off previous_offset = 0;
    do {
      // A sibling link pointing backwards would loop forever; DIEs only move forward.
      Dwarf_Off offset = dwarf_dieoffset(&child);
      if (offset <= previous_offset) break;
      previous_offset = offset;
      int tag = dwarf_tag(&child);
      int32_t owner = current.owner;
      if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
          tag == DW_TAG_entry_point) {
        int32_t index = static_cast<int32_t>(unit.scopes.size());
        bool has_code = false;
        RangeIndex& level = owner == kNoScope ? unit.top : unit.scopes[owner].children;
        Dwarf_Addr base = 0, start = 0, end = 0;
        for (ptrdiff_t off = 0; (off = dwarf_ranges(&child, off, &base, &start, &end)) > 0;) {
          if (end > start) {
            level.add(start, end, static_cast<uint32_t>(index));
            has_code = true;
          }
        }
        if (has_code) {
          Scope& scope = unit.scopes.emplace_back();
          scope.die = child;
          scope.parent = owner;
          scope.inlined = tag == DW_TAG_inlined_subroutine;
          owner = index;
        }
      }
      if (dwarf_haschildren(&child) > 0) stack.push_back({child, owner});
    } while (dwarf_siblingof(&child, &child) == 0);
  }
  unit.top.finish();
  for (Scope& scope : unit.scopes) scope.children.finish();
}

}  // namespace hotline::symbolize

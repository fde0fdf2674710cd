// What a function scope is called and where it is defined: the demangled linkage name or the
// DWARF name by the unit's language, lambdas and other functions of local types told apart, the
// symbol table's name where DWARF has none.
#include <dwarf.h>
#include <elfutils/libdw.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "symbolize/dwarf_index.h"
#include "symbolize/symbol_index.h"
#include "symbolize/symbolizer_impl.h"

namespace hotline::symbolize {
namespace {

bool isCxx(int language) {
  return language == DW_LANG_C_plus_plus || language == DW_LANG_C_plus_plus_03 ||
         language == DW_LANG_C_plus_plus_11 || language == DW_LANG_C_plus_plus_14;
}

// Languages whose DW_AT_name is the name a programmer wrote and whose linkage names are an
// implementation detail (`__mod_MOD_f`, `P$PROG_$$_F$LONGINT`), so the DWARF name wins.
bool prefersSourceName(int language) {
  switch (language) {
    case DW_LANG_Fortran77:
    case DW_LANG_Fortran90:
    case DW_LANG_Fortran95:
    case DW_LANG_Fortran03:
    case DW_LANG_Fortran08:
    case DW_LANG_Pascal83:
    case DW_LANG_Modula2:
    case DW_LANG_Modula3:
    case DW_LANG_Ada83:
    case DW_LANG_Ada95:
      return true;
    default:
      return false;
  }
}

}  // namespace

const std::pair<std::string, int>& Symbolizer::Impl::unitFacts(Module& m, Dwarf_CU* cu) {
  auto [it, inserted] = m.unit_facts.try_emplace(cu);
  if (inserted) {
    Dwarf_Die cu_die;
    if (dwarf_cu_die(cu, &cu_die, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr) !=
        nullptr) {
      if (const char* dir = stringAttribute(&cu_die, DW_AT_comp_dir, false)) {
        it->second.first = dir;
      }
      it->second.second = dwarf_srclang(&cu_die);
    }
  }
  return it->second;
}

namespace {

// Where a function's code begins: its entry pc, or for one that GCC split into a hot part and a
// `.cold` part (DW_AT_ranges and no DW_AT_low_pc, so no entry pc), its first range's start,
// which is the hot part's entry.
bool EntryOf(Dwarf_Die* die, Dwarf_Addr* entry) {
  if (dwarf_entrypc(die, entry) == 0) return true;
  Dwarf_Addr base = 0, start = 0, end = 0;
  if (dwarf_ranges(die, 0, &base, &start, &end) <= 0) return false;
  *entry = start;
  return true;
}

}  // namespace

void Symbolizer::Impl::describe(Module& m, CompileUnit& unit, Scope& scope) {
  scope.described = true;
  Dwarf_Die* die = &scope.die;
  // The name may come from an abstract origin in another unit (LTO, dwz): that unit's
  // language decides how to read it.
  Dwarf_Attribute name_attr;
  const char* source_name = nullptr;
  int language = unit.language;
  if (dwarf_attr_integrate(die, DW_AT_name, &name_attr) != nullptr) {
    source_name = dwarf_formstring(&name_attr);
    const std::pair<std::string, int>& facts = unitFacts(m, name_attr.cu);
    if (facts.second > 0) language = facts.second;
  }
  const char* linkage = stringAttribute(die, DW_AT_linkage_name, true);
  if (linkage == nullptr) linkage = stringAttribute(die, DW_AT_MIPS_linkage_name, true);
  const bool itanium = linkage != nullptr && linkage[0] == '_' && linkage[1] == 'Z';
  if (itanium && !(prefersSourceName(language) && source_name != nullptr)) {
    // The demangled linkage name carries namespaces, template arguments and parameters.
    scope.name = demangle(linkage);
  } else if (source_name != nullptr) {
    scope.name = source_name;
  } else if (linkage != nullptr) {
    scope.name = linkage;
  }
  Dwarf_Attribute decl_attr;
  const std::string* decl_dir = &unit.comp_dir;
  if (dwarf_attr_integrate(die, DW_AT_decl_file, &decl_attr) != nullptr) {
    const std::string& dir = unitFacts(m, decl_attr.cu).first;
    if (!dir.empty()) decl_dir = &dir;
  }
  scope.decl_file = filePath(m, dwarf_decl_file(die), *decl_dir);
  int line = 0;
  if (dwarf_decl_line(die, &line) == 0 && line > 0) scope.decl_line = static_cast<uint32_t>(line);
  if (!scope.inlined && (scope.decl_file.empty() || scope.decl_line == 0)) {
    // Some producers (Free Pascal) give no decl_file/decl_line: the line of the function's
    // entry is its definition site then.
    Dwarf_Addr entry = 0;
    if (EntryOf(die, &entry)) {
      auto [file, entry_line] = lineAt(m, unit, entry);
      if (scope.decl_file.empty()) scope.decl_file = file;
      if (scope.decl_line == 0) scope.decl_line = entry_line;
    }
  }
  if (!scope.inlined) placeAtDefinition(m, unit, scope);
  if (linkage == nullptr && isCxx(language)) nameWithoutLinkage(m, unit, scope, *decl_dir);
  if (scope.name.empty()) {
    // Nameless DWARF (rare): the symbol table may still know the function.
    Dwarf_Addr entry = 0;
    if (EntryOf(die, &entry)) {
      scope.name = symbolName(m, entry + m.dwarf_bias, nullptr);
    }
  }
}

void Symbolizer::Impl::placeAtDefinition(Module& m, CompileUnit& unit, Scope& scope) {
  const char* unit_name = dwarf_diename(&unit.die);
  const std::string source = unit_name ? filePath(m, unit_name, unit.comp_dir) : std::string();
  if (scope.decl_file.empty() || scope.decl_file == source) return;
  Dwarf_Lines* lines = nullptr;
  size_t count = 0;
  if (dwarf_getsrclines(&unit.die, &lines, &count) != 0 || count == 0) return;
  auto address = [&](size_t i) {
    Dwarf_Addr a = 0;
    dwarf_lineaddr(dwarf_onesrcline(lines, i), &a);
    return a;
  };
  struct Row {
    Dwarf_Addr address = ~Dwarf_Addr{0};
    std::string file;
    uint32_t line = 0;
  } first, first_in_source;
  Dwarf_Addr base = 0, start = 0, end = 0;
  for (ptrdiff_t offset = 0;
       (offset = dwarf_ranges(&scope.die, offset, &base, &start, &end)) > 0;) {
    size_t lo = 0, hi = count;  // the rows are sorted by address: the first at or after start
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (address(mid) < start)
        lo = mid + 1;
      else
        hi = mid;
    }
    for (size_t i = lo; i < count && address(i) < end; ++i) {
      Dwarf_Line* row = dwarf_onesrcline(lines, i);
      bool sequence_end = false;
      dwarf_lineendsequence(row, &sequence_end);
      int number = 0;
      if (sequence_end || dwarf_lineno(row, &number) != 0 || number <= 0) continue;
      std::string file = filePath(m, dwarf_linesrc(row, nullptr, nullptr), unit.comp_dir);
      if (file == scope.decl_file) return;  // code in the declared file: the DIE is the definition
      Dwarf_Addr at = address(i);
      if (at < first.address) first = Row{at, file, uint32_t(number)};
      if (file == source && at < first_in_source.address)
        first_in_source = Row{at, file, uint32_t(number)};
    }
  }
  const Row& place = first_in_source.line ? first_in_source : first;
  if (place.line == 0) return;
  scope.decl_file = place.file;
  scope.decl_line = place.line;
}

void Symbolizer::Impl::nameWithoutLinkage(Module& m, CompileUnit& unit, Scope& scope,
                                          const std::string& comp_dir) {
  Dwarf_Die origin = scope.die;
  for (int hops = 0; hops < 8; ++hops) {  // to the declaration, through inlining and clones
    Dwarf_Attribute ref;
    if (dwarf_attr(&origin, DW_AT_abstract_origin, &ref) == nullptr &&
        dwarf_attr(&origin, DW_AT_specification, &ref) == nullptr)
      break;
    if (dwarf_formref_die(&ref, &origin) == nullptr) break;
  }
  Dwarf_Die* chain = nullptr;
  int depth = dwarf_getscopes_die(&origin, &chain);
  bool lambda = depth >= 2 && scope.name == "operator()" &&
                (dwarf_tag(&chain[1]) == DW_TAG_class_type ||
                 dwarf_tag(&chain[1]) == DW_TAG_structure_type) &&
                dwarf_diename(&chain[1]) == nullptr;
  if (lambda) {
    // `main::{lambda at app.cc:11:16}`: the enclosing function, and the lambda's place, which
    // is the closure type's (the call operator itself is artificial and has none).
    std::string enclosing;
    for (int i = 2; i < depth && enclosing.empty(); ++i)
      if (dwarf_tag(&chain[i]) == DW_TAG_subprogram && dwarf_diename(&chain[i]) != nullptr)
        enclosing = dwarf_diename(&chain[i]);
    Dwarf_Die* closure = &chain[1];
    int line = 0, column = 0;
    if (scope.decl_file.empty()) scope.decl_file = filePath(m, dwarf_decl_file(closure), comp_dir);
    if (scope.decl_line == 0 && dwarf_decl_line(closure, &line) == 0 && line > 0)
      scope.decl_line = static_cast<uint32_t>(line);
    dwarf_decl_column(closure, &column);
    const std::string& file = scope.decl_file;
    std::string place = file.substr(file.rfind('/') + 1) + ":" + std::to_string(scope.decl_line);
    if (column > 0) place += ":" + std::to_string(column);
    scope.name = (enclosing.empty() ? "" : enclosing + "::") + "{lambda at " + place + "}";
  } else if (!scope.inlined) {
    Dwarf_Addr entry = 0;
    if (EntryOf(&scope.die, &entry)) {
      std::string symbol = symbolName(m, entry + m.dwarf_bias, nullptr);
      // GCC's clones keep their function's name: `f(int) [clone .constprop.0]` is f.
      size_t clone = symbol.find(" [clone ");
      if (clone != std::string::npos) symbol.resize(clone);
      if (!symbol.empty()) scope.name = symbol;
    }
  } else if (Scope* copy = outOfLineCopy(unit, scope)) {
    // An inlined copy has only the DWARF name (`operator()<int, int*>`); the out-of-line copy of
    // the same function is named by its symbol. One function, one name.
    if (!copy->described) describe(m, unit, *copy);
    if (!copy->name.empty()) scope.name = copy->name;
  }
  free(chain);
}

Scope* Symbolizer::Impl::outOfLineCopy(CompileUnit& unit, const Scope& inlined) {
  auto origin_of = [](const Dwarf_Die& die) -> std::optional<Dwarf_Off> {
    Dwarf_Die copy = die, origin;
    Dwarf_Attribute ref;
    if (dwarf_attr(&copy, DW_AT_abstract_origin, &ref) == nullptr ||
        dwarf_formref_die(&ref, &origin) == nullptr)
      return std::nullopt;
    return dwarf_dieoffset(&origin);
  };
  if (!unit.copies_indexed) {
    unit.copies_indexed = true;
    for (size_t i = 0; i < unit.scopes.size(); ++i)
      if (!unit.scopes[i].inlined)
        if (std::optional<Dwarf_Off> origin = origin_of(unit.scopes[i].die))
          unit.out_of_line_copies.emplace(*origin, int32_t(i));
  }
  std::optional<Dwarf_Off> origin = origin_of(inlined.die);
  if (!origin) return nullptr;
  auto it = unit.out_of_line_copies.find(*origin);
  return it == unit.out_of_line_copies.end() ? nullptr : &unit.scopes[size_t(it->second)];
}

std::string Symbolizer::Impl::symbolName(Module& m, uint64_t dwfl_address, uint64_t* symbol_start) {
  const std::string* name = m.symbols.find(dwfl_address, symbol_start);
  return name == nullptr ? std::string() : *name;
}

}  // namespace hotline::symbolize

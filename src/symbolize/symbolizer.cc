// Resolution with elfutils: libdwfl opens each module once and finds its separate debug file
// (build-id, .gnu_debuglink, debug_dirs); libdw reads the DWARF. Function scopes are not looked
// up with dwarf_getscopes, which walks the compilation unit's DIEs again for every address:
// instead each compilation unit is indexed once, on first use, into a tree of address ranges
// (subprograms and the inlined subroutines inside them), so an address costs a few binary
// searches. See docs/symbols.md.
#include "symbolize/symbolizer.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace hotline::symbolize {
namespace {

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

constexpr int32_t kNoScope = -1;

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
};

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

// C++ (Itanium ABI) names demangled; anything else as it is.
std::string demangle(const char* name) {
  if (name == nullptr) return {};
  if (name[0] == '_' && name[1] == 'Z') {
    int status = 0;
    char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    if (status == 0 && demangled != nullptr) {
      std::string result(demangled);
      std::free(demangled);
      return result;
    }
    std::free(demangled);
  }
  return name;
}

// The functions of a module's symbol table (.symtab, else .dynsym, plus a MiniDebugInfo table),
// sorted by address. libdwfl's own address-to-symbol lookup scans the whole table for every
// address, far too slow for 100k addresses in a large library, so it is indexed once here.
class SymbolIndex {
 public:
  // A symbol without a size (crti's _init, hand-written assembler) reaches at most to the end
  // of its section: code after it in another section (the PLT after .init) is not its.
  static uint64_t SectionEnd(Elf* elf, GElf_Word section, Dwarf_Addr bias, uint64_t address) {
    GElf_Shdr header;
    Elf_Scn* scn = elf ? elf_getscn(elf, section) : nullptr;
    if (!scn || !gelf_getshdr(scn, &header) || header.sh_size == 0) return address;
    uint64_t end = header.sh_addr + bias + header.sh_size;
    return end > address ? end : address;
  }

  void build(Dwfl_Module* mod) {
    int count = dwfl_module_getsymtab(mod);
    for (int i = 1; i < count; ++i) {
      GElf_Sym sym;
      GElf_Addr address = 0;
      GElf_Word section = 0;
      Elf* elf = nullptr;
      Dwarf_Addr bias = 0;
      const char* name = dwfl_module_getsym_info(mod, i, &sym, &address, &section, &elf, &bias);
      int type = GELF_ST_TYPE(sym.st_info);
      if (name == nullptr || name[0] == '\0' || sym.st_shndx == SHN_UNDEF ||
          (type != STT_FUNC && type != STT_GNU_IFUNC)) {
        continue;
      }
      int bind = GELF_ST_BIND(sym.st_info);
      int rank = bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0;
      uint64_t end = address + sym.st_size;
      if (sym.st_size == 0) end = SectionEnd(elf, section, bias, address);
      symbols_.push_back({address, end, rank, name, {}, false});
    }
    has_symbols_ = !symbols_.empty();
    addPltStubs(mod);
    // At one address, aliases sort by preference (sized, then global over weak over local) so
    // that the backward search below meets the preferred one first.
    std::sort(symbols_.begin(), symbols_.end(), [](const Symbol& a, const Symbol& b) {
      if (a.start != b.start) return a.start < b.start;
      bool a_sized = a.end > a.start, b_sized = b.end > b.start;
      if (a_sized != b_sized) return !a_sized;
      return a.rank < b.rank;
    });
    max_end_.resize(symbols_.size());
    uint64_t running = 0;
    for (size_t i = 0; i < symbols_.size(); ++i) {
      running = std::max(running, symbols_[i].end);
      max_end_[i] = running;
    }
  }

  // Whether the module has no symbol table: the PLT stubs' names alone do not make one.
  bool empty() const { return !has_symbols_; }

  // The demangled name of the function containing `address` and where it starts; a symbol
  // without a size (hand-written assembler) counts as reaching up to the address when it is
  // the nearest one below and no sized symbol contains the address.
  const std::string* find(uint64_t address, uint64_t* start) {
    auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                               [](uint64_t value, const Symbol& s) { return value < s.start; });
    size_t nearest = static_cast<size_t>(it - symbols_.begin());
    if (nearest == 0) return nullptr;
    for (size_t i = nearest; i-- > 0;) {
      if (max_end_[i] <= address) break;
      if (symbols_[i].end > address) return name(symbols_[i], start);
    }
    Symbol& below = symbols_[nearest - 1];
    if (below.end == below.start) return name(below, start);
    return nullptr;
  }

 private:
  struct Symbol {
    uint64_t start;
    uint64_t end;
    int rank;
    const char* raw;  // points into libelf's string table, valid while the Dwfl lives
    std::string demangled;
    bool ready;
  };

  // The PLT's stubs have no symbols: each is named after the function whose GOT slot its jump
  // reads (`puts@plt`, as objdump and perf say), found in the relocations of that slot. x86-64
  // only: a stub's jump is `jmp *disp32(%rip)` (ff 25), after an endbr64 and a bnd prefix
  // when the code is built for CET.
  void addPltStubs(Dwfl_Module* mod) {
    Dwarf_Addr bias = 0;
    Elf* elf = dwfl_module_getelf(mod, &bias);
    GElf_Ehdr ehdr;
    size_t names = 0;
    if (!elf || !gelf_getehdr(elf, &ehdr) || ehdr.e_machine != EM_X86_64 ||
        elf_getshdrstrndx(elf, &names) != 0)
      return;
    std::unordered_map<uint64_t, const char*> slots;  // GOT slot → the function it holds
    std::vector<Elf_Scn*> stubs;
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr header;
      if (!gelf_getshdr(scn, &header)) continue;
      const char* name = elf_strptr(elf, names, header.sh_name);
      if (header.sh_type == SHT_RELA) addSlots(elf, scn, header, slots);
      if (name && std::string_view(name).starts_with(".plt") && header.sh_type == SHT_PROGBITS)
        stubs.push_back(scn);
    }
    for (Elf_Scn* scn : stubs) {
      GElf_Shdr header;
      Elf_Data* data = elf_getdata(scn, nullptr);
      if (!gelf_getshdr(scn, &header) || !data || !data->d_buf) continue;
      uint64_t size = std::min<uint64_t>(header.sh_size, data->d_size);
      uint64_t step = header.sh_entsize ? header.sh_entsize : 16;
      const auto* bytes = static_cast<const uint8_t*>(data->d_buf);
      for (uint64_t at = 0; at + step <= size; at += step) {
        for (uint64_t k = at; k + 6 <= at + step; ++k) {
          if (bytes[k] != 0xff || bytes[k + 1] != 0x25) continue;
          int32_t displacement;
          std::memcpy(&displacement, bytes + k + 2, sizeof displacement);
          auto slot = slots.find(header.sh_addr + k + 6 + static_cast<int64_t>(displacement));
          if (slot != slots.end()) {
            uint64_t start = header.sh_addr + at + bias;
            symbols_.push_back(
                {start, start + step, 0, slot->second, demangle(slot->second) + "@plt", true});
          }
          break;
        }
      }
    }
  }

  // The GOT slots a relocation section fills with functions, and their names.
  static void addSlots(Elf* elf, Elf_Scn* scn, const GElf_Shdr& header,
                       std::unordered_map<uint64_t, const char*>& slots) {
    Elf_Scn* symbols = elf_getscn(elf, header.sh_link);
    GElf_Shdr symbols_header;
    Elf_Data* relocations = elf_getdata(scn, nullptr);
    Elf_Data* symbol_data = symbols ? elf_getdata(symbols, nullptr) : nullptr;
    if (!relocations || !symbol_data || !gelf_getshdr(symbols, &symbols_header)) return;
    size_t count = header.sh_entsize ? header.sh_size / header.sh_entsize : 0;
    for (size_t i = 0; i < count; ++i) {
      GElf_Rela rela;
      GElf_Sym symbol;
      if (!gelf_getrela(relocations, static_cast<int>(i), &rela)) break;
      uint64_t type = GELF_R_TYPE(rela.r_info);
      if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
      if (!gelf_getsym(symbol_data, static_cast<int>(GELF_R_SYM(rela.r_info)), &symbol)) continue;
      const char* name = elf_strptr(elf, symbols_header.sh_link, symbol.st_name);
      if (name && *name) slots[rela.r_offset] = name;
    }
  }
  const std::string* name(Symbol& symbol, uint64_t* start) {
    if (!symbol.ready) {
      symbol.demangled = demangle(symbol.raw);
      symbol.ready = true;
    }
    if (start != nullptr) *start = symbol.start;
    return &symbol.demangled;
  }
  std::vector<Symbol> symbols_;
  std::vector<uint64_t> max_end_;
  bool has_symbols_ = false;
};

// One spelling per file: relative names are taken against the compilation directory and `.`,
// `..` and doubled slashes are folded lexically, so that the same header reached from two
// compilation units (`/src/a/../inc/x.h`, `/src/inc/x.h`) is one file to the model.
// libdw already prefixes entries of directory 0, which is the compilation directory itself; when
// that is relative (glibc's `./stdlib`) the name starts with it and must not get it twice.
std::string normalizePath(const char* name, const std::string& comp_dir) {
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

const char* stringAttribute(Dwarf_Die* die, unsigned int name, bool integrate) {
  Dwarf_Attribute attr;
  Dwarf_Attribute* found =
      integrate ? dwarf_attr_integrate(die, name, &attr) : dwarf_attr(die, name, &attr);
  return found == nullptr ? nullptr : dwarf_formstring(found);
}

std::optional<uint64_t> unsignedAttribute(Dwarf_Die* die, unsigned int name) {
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  if (dwarf_attr(die, name, &attr) == nullptr || dwarf_formudata(&attr, &value) != 0) {
    return std::nullopt;
  }
  return value;
}

bool isSpecialModule(const std::string& path) {
  // The kernel's vDSO has no file; bracketed names ([vdso], [vsyscall], [heap]) are not files.
  return path.empty() || path[0] == '[' || path == "linux-vdso.so.1" || path == "linux-gate.so.1";
}

}  // namespace

struct Symbolizer::Impl {
  // One profiled module (path + build-id), opened once.
  struct Module {
    ~Module() {
      if (dwfl != nullptr) dwfl_end(dwfl);
    }
    std::string path;
    Dwfl* dwfl = nullptr;
    Dwfl_Module* mod = nullptr;  // null: nothing can be resolved in this module
    Dwarf* dwarf = nullptr;      // null: symbol table only
    SymbolIndex symbols;
    // The Dwfl addresses the module's segments occupy; nothing outside them is resolved, so a
    // stray address cannot be named after the last symbol below it.
    uint64_t low = 0;
    uint64_t high = 0;
    int64_t elf_bias = 0;    // Dwfl address − ELF virtual address
    int64_t dwarf_bias = 0;  // Dwfl address − DWARF address
    std::vector<CompileUnit> units;
    RangeIndex unit_ranges;
    // Units that state no address ranges of their own (some producers, LTO) but may hold
    // functions: indexed all at once on the first address no unit range covers.
    std::vector<uint32_t> rangeless_units;
    bool rangeless_indexed = false;
    RangeIndex rangeless_ranges;
    // Compilation directory and language per unit, for attributes that live in another unit
    // than the address (abstract origins across units, dwz partial units).
    std::unordered_map<Dwarf_CU*, std::pair<std::string, int>> unit_facts;
    // libdw hands out file names as pointers into its own tables, stable for the Dwarf's life.
    std::unordered_map<const char*, std::string> file_names;
    // Keyed by ELF virtual address; [1] holds return addresses, looked up one byte earlier.
    std::unordered_map<uint64_t, ResolvedAddress> cache[2];
  };

  explicit Impl(SymbolizerOptions opts) : options(std::move(opts)) {
    // The search path libdwfl's standard find_debuginfo reads: "" is the module's own
    // directory, ".debug" a subdirectory of it, then the configured directories, where
    // libdwfl looks for .build-id/xx/yyyy.debug and for the .gnu_debuglink name.
    debuginfo_path = ":.debug";
    for (const std::string& dir : options.debug_dirs) {
      if (!dir.empty()) debuginfo_path += ":" + dir;
    }
    debuginfo_path_ptr = debuginfo_path.data();
    callbacks.find_elf = dwfl_build_id_find_elf;
    callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
    callbacks.section_address = dwfl_offline_section_address;
    callbacks.debuginfo_path = &debuginfo_path_ptr;
  }

  void warn(std::string message) {
    if (warned.insert(message).second) warnings.push_back(std::move(message));
  }

  Module& moduleFor(const ModuleInfo& info) {
    if (last_module != nullptr && last_path == info.path && last_build_id == info.build_id) {
      return *last_module;
    }
    std::string key = info.path;
    key += '\0';
    key += info.build_id;
    auto [it, inserted] = modules.try_emplace(std::move(key));
    if (inserted) {
      it->second = std::make_unique<Module>();
      open(*it->second, info);
    }
    last_module = it->second.get();
    last_path = info.path;
    last_build_id = info.build_id;
    return *last_module;
  }

  void open(Module& m, const ModuleInfo& info) {
    m.path = info.path;
    if (isSpecialModule(info.path)) return;
    const std::string& path = info.path;
    // Opened here only to say precisely why a file cannot be used; libdwfl opens it again.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      warn(path + ": cannot open (" + std::strerror(errno) + "); its addresses stay unresolved");
      return;
    }
    ::close(fd);
    m.dwfl = dwfl_begin(&callbacks);
    if (m.dwfl == nullptr) {
      warn(path + ": cannot start libdwfl (" + dwfl_errmsg(-1) + ")");
      return;
    }
    dwfl_report_begin(m.dwfl);
    size_t slash = path.rfind('/');
    std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    // Placed at its own virtual addresses (base 0 relative to p_vaddr), so Dwfl addresses
    // are ELF addresses; the recorded bias is removed before any lookup.
    Dwfl_Module* mod = dwfl_report_elf(m.dwfl, name.c_str(), path.c_str(), -1, 0, true);
    dwfl_report_end(m.dwfl, nullptr, nullptr);
    if (mod == nullptr) {
      warn(path + ": not a usable ELF file (" + dwfl_errmsg(-1) + "); its addresses stay " +
           "unresolved");
      return;
    }
    m.mod = mod;
    Dwarf_Addr elf_bias = 0;
    if (dwfl_module_getelf(mod, &elf_bias) == nullptr) {
      warn(path + ": cannot read ELF (" + dwfl_errmsg(-1) + "); its addresses stay unresolved");
      m.mod = nullptr;
      return;
    }
    m.elf_bias = static_cast<int64_t>(elf_bias);
    Dwarf_Addr low = 0, high = 0;
    dwfl_module_info(mod, nullptr, &low, &high, nullptr, nullptr, nullptr, nullptr);
    m.low = low;
    m.high = high;

    if (!info.build_id.empty()) {
      const unsigned char* bits = nullptr;
      GElf_Addr note_vaddr = 0;
      int length = dwfl_module_build_id(mod, &bits, &note_vaddr);
      if (length <= 0 ||
          std::string(reinterpret_cast<const char*>(bits), length) != info.build_id) {
        warn(path + ": build-id differs from the profiled binary (rebuilt since the run?); its " +
             "symbols may be wrong");
      }
    }

    m.symbols.build(mod);
    Dwarf_Addr dwarf_bias = 0;
    m.dwarf = dwfl_module_getdwarf(mod, &dwarf_bias);
    if (m.dwarf == nullptr) {
      if (!m.symbols.empty()) {
        warn(path + ": no debug info; functions only, no lines");
      } else {
        warn(path + ": no debug info and no symbols; addresses only");
      }
      return;
    }
    m.dwarf_bias = static_cast<int64_t>(dwarf_bias);
    indexUnits(m);
  }

  // One pass over the unit headers: which unit covers which addresses. The DIEs inside a unit
  // are read only when an address first falls into it.
  static void indexUnits(Module& m) {
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
      for (ptrdiff_t offset = 0;
           (offset = dwarf_ranges(&cu_die, offset, &base, &start, &end)) > 0;) {
        m.unit_ranges.add(start, end, index);
        has_ranges = true;
      }
      if (!has_ranges && dwarf_haschildren(&cu_die) > 0) m.rangeless_units.push_back(index);
    }
    m.unit_ranges.finish();
  }

  static void indexRangelessUnits(Module& m) {
    m.rangeless_indexed = true;
    for (uint32_t index : m.rangeless_units) {
      CompileUnit& unit = m.units[index];
      if (!unit.indexed) indexScopes(unit);
      unit.top.forEach(
          [&](uint64_t low, uint64_t high) { m.rangeless_ranges.add(low, high, index); });
    }
    m.rangeless_ranges.finish();
  }

  // The unit containing `pc` (a DWARF address), indexed.
  static CompileUnit* unitAt(Module& m, uint64_t pc) {
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

  // Compilation directory and language of the unit an attribute was read from.
  const std::pair<std::string, int>& unitFacts(Module& m, Dwarf_CU* cu) {
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

  // Reads a unit's DIE tree once, keeping every subprogram and inlined subroutine that owns
  // code, nested as the DWARF nests them. Iterative, so hostile nesting cannot overflow the stack.
  static void indexScopes(CompileUnit& unit) {
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

  std::string filePath(Module& m, const char* name, const std::string& comp_dir) {
    if (name == nullptr) return {};
    auto [it, inserted] = m.file_names.try_emplace(name);
    if (inserted) it->second = normalizePath(name, comp_dir);
    return it->second;
  }

  // File and line of the line-table row covering `pc`, if there is one.
  std::pair<std::string, uint32_t> lineAt(Module& m, CompileUnit& unit, uint64_t pc) {
    Dwarf_Line* line = dwarf_getsrc_die(&unit.die, pc);
    if (line == nullptr) return {};
    int number = 0;
    if (dwarf_lineno(line, &number) != 0 || number < 0) number = 0;
    return {filePath(m, dwarf_linesrc(line, nullptr, nullptr), unit.comp_dir),
            static_cast<uint32_t>(number)};
  }

  void describe(Module& m, CompileUnit& unit, Scope& scope) {
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
      if (dwarf_entrypc(die, &entry) == 0) {
        auto [file, entry_line] = lineAt(m, unit, entry);
        if (scope.decl_file.empty()) scope.decl_file = file;
        if (scope.decl_line == 0) scope.decl_line = entry_line;
      }
    }
    if (linkage == nullptr && isCxx(language)) nameWithoutLinkage(m, scope, *decl_dir);
    if (scope.name.empty()) {
      // Nameless DWARF (rare): the symbol table may still know the function.
      Dwarf_Addr entry = 0;
      if (dwarf_entrypc(die, &entry) == 0) {
        scope.name = symbolName(m, entry + m.dwarf_bias, nullptr);
      }
    }
  }

  // C++ functions without a linkage name are those of local types: lambdas, and templates
  // instantiated over them. Their DWARF names are the same for every such function (every
  // lambda's call operator is `operator()`, `run<main()::<lambda(int)> >` stands for each
  // lambda's instantiation), so two of them would be one row. What tells them apart is the
  // symbol at an out-of-line function's entry (`run<main::{lambda(int)#2}>`), and, for a lambda,
  // where it is written.
  void nameWithoutLinkage(Module& m, Scope& scope, const std::string& comp_dir) {
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
      if (scope.decl_file.empty())
        scope.decl_file = filePath(m, dwarf_decl_file(closure), comp_dir);
      if (scope.decl_line == 0 && dwarf_decl_line(closure, &line) == 0 && line > 0)
        scope.decl_line = static_cast<uint32_t>(line);
      dwarf_decl_column(closure, &column);
      const std::string& file = scope.decl_file;
      std::string place = file.substr(file.rfind('/') + 1) + ":" + std::to_string(scope.decl_line);
      if (column > 0) place += ":" + std::to_string(column);
      scope.name = (enclosing.empty() ? "" : enclosing + "::") + "{lambda at " + place + "}";
    } else if (!scope.inlined) {
      Dwarf_Addr entry = 0;
      if (dwarf_entrypc(&scope.die, &entry) == 0) {
        std::string symbol = symbolName(m, entry + m.dwarf_bias, nullptr);
        // GCC's clones keep their function's name: `f(int) [clone .constprop.0]` is f.
        size_t clone = symbol.find(" [clone ");
        if (clone != std::string::npos) symbol.resize(clone);
        if (!symbol.empty()) scope.name = symbol;
      }
    }
    free(chain);
  }

  // The symbol-table name at a Dwfl address, demangled; "" when there is none.
  static std::string symbolName(Module& m, uint64_t dwfl_address, uint64_t* symbol_start) {
    const std::string* name = m.symbols.find(dwfl_address, symbol_start);
    return name == nullptr ? std::string() : *name;
  }

  void symbolize(Module& m, uint64_t vaddr, std::vector<ResolvedFrame>& frames) {
    const uint64_t dwfl_address = vaddr + m.elf_bias;
    if (dwfl_address < m.low || dwfl_address >= m.high) return;
    if (m.dwarf != nullptr) {
      const uint64_t pc = dwfl_address - m.dwarf_bias;
      if (CompileUnit* unit = unitAt(m, pc)) {
        if (symbolizeDwarf(m, *unit, pc, frames)) return;
        // Code the unit covers without a function DIE (assembler, Pascal main blocks):
        // the symbol table names the function, the line table still gives the line.
        symbolizeSymbol(m, dwfl_address, unit, pc, frames);
        return;
      }
    }
    symbolizeSymbol(m, dwfl_address, nullptr, 0, frames);
  }

  bool symbolizeDwarf(Module& m, CompileUnit& unit, uint64_t pc,
                      std::vector<ResolvedFrame>& frames) {
    std::optional<uint32_t> found = unit.top.find(pc);
    if (!found) return false;
    int32_t innermost = static_cast<int32_t>(*found);
    while (std::optional<uint32_t> child = unit.scopes[innermost].children.find(pc)) {
      innermost = static_cast<int32_t>(*child);
    }
    auto [file, line] = lineAt(m, unit, pc);
    // Innermost first: each inlined level is a frame whose caller's position is the call
    // site recorded on the inlined_subroutine; the chain ends at the real function.
    for (int32_t index = innermost; index != kNoScope;) {
      Scope& scope = unit.scopes[index];
      if (!scope.described) describe(m, unit, scope);
      ResolvedFrame& frame = frames.emplace_back();
      frame.function = scope.name;
      frame.file = std::move(file);
      frame.line = line;
      frame.decl_file = scope.decl_file;
      frame.decl_line = scope.decl_line;
      frame.source = scope.inlined ? FrameSource::kInline : FrameSource::kDwarf;
      if (!scope.inlined) break;
      file = callFile(m, unit, scope.die);
      line = static_cast<uint32_t>(unsignedAttribute(&scope.die, DW_AT_call_line).value_or(0));
      index = scope.parent;
    }
    return true;
  }

  std::string callFile(Module& m, CompileUnit& unit, Dwarf_Die& die) {
    std::optional<uint64_t> index = unsignedAttribute(&die, DW_AT_call_file);
    if (!index) return {};
    Dwarf_Files* files = nullptr;
    size_t count = 0;
    if (dwarf_getsrcfiles(&unit.die, &files, &count) != 0 || *index >= count) return {};
    return filePath(m, dwarf_filesrc(files, *index, nullptr, nullptr), unit.comp_dir);
  }

  void symbolizeSymbol(Module& m, uint64_t dwfl_address, CompileUnit* unit, uint64_t pc,
                       std::vector<ResolvedFrame>& frames) {
    uint64_t symbol_start = 0;
    std::string name = symbolName(m, dwfl_address, &symbol_start);
    std::pair<std::string, uint32_t> where;
    if (unit != nullptr) where = lineAt(m, *unit, pc);
    if (name.empty() && where.second == 0) return;
    ResolvedFrame& frame = frames.emplace_back();
    frame.function = std::move(name);
    frame.file = std::move(where.first);
    frame.line = where.second;
    frame.source = FrameSource::kSymbolTable;
    if (unit != nullptr && !frame.function.empty()) {
      auto [decl_file, decl_line] = lineAt(m, *unit, symbol_start - m.dwarf_bias);
      frame.decl_file = std::move(decl_file);
      frame.decl_line = decl_line;
    }
  }

  SymbolizerOptions options;
  std::string debuginfo_path;
  char* debuginfo_path_ptr = nullptr;
  Dwfl_Callbacks callbacks{};
  std::unordered_map<std::string, std::unique_ptr<Module>> modules;
  Module* last_module = nullptr;
  std::string last_path;
  std::string last_build_id;
  std::vector<std::string> warnings;
  std::unordered_set<std::string> warned;
};

Symbolizer::Symbolizer(SymbolizerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

Symbolizer::~Symbolizer() = default;

const ResolvedAddress& Symbolizer::resolve(const ModuleInfo& module, uint64_t address,
                                           bool is_return_address) {
  Impl::Module& m = impl_->moduleFor(module);
  // Unsigned wrap-around is intended: a bias above the address gives a huge vaddr that no
  // module covers, which resolves to nothing.
  const uint64_t vaddr = address - module.bias;
  auto [it, inserted] = m.cache[is_return_address ? 1 : 0].try_emplace(vaddr);
  ResolvedAddress& result = it->second;
  if (!inserted) return result;
  result.module = module.path;
  result.module_address = vaddr;
  if (m.mod != nullptr) {
    // A return address points after the call; one byte back is inside the call instruction.
    impl_->symbolize(m, is_return_address && vaddr > 0 ? vaddr - 1 : vaddr, result.frames);
  }
  return result;
}

const std::vector<std::string>& Symbolizer::warnings() const { return impl_->warnings; }

}  // namespace hotline::symbolize

// Resolution with elfutils: libdwfl opens each module once and finds its separate debug file
// (build-id, .gnu_debuglink, debug_dirs); libdw reads the DWARF. An address is looked up in the
// module's DWARF index (dwarf_index.h), else in its symbol table (symbol_index.h), and each answer
// is cached. See docs/symbols.md.
#include "symbolize/symbolizer.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>

#include "symbolize/line_table.h"
#include "symbolize/symbol_cache.h"
#include "symbolize/symbolizer_impl.h"

namespace hotline::symbolize {
namespace {

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

Symbolizer::Impl::Impl(SymbolizerOptions opts) : options(std::move(opts)) {
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

Symbolizer::Impl::~Impl() {
  for (auto& [key, m] : modules)
    if (m->cache_grew && m->dwarf != nullptr && !m->cache_path.empty())
      SaveSymbolCache(m->cache_path, m->cache[0], m->cache[1]);
}

void Symbolizer::Impl::openOnce(Module& m, const ModuleInfo& info) {
  if (m.opened) return;
  m.opened = true;
  open(m, info);
}

void Symbolizer::Impl::warn(std::string message) {
  if (warned.insert(message).second) warnings.push_back(std::move(message));
}

Symbolizer::Impl::Module& Symbolizer::Impl::moduleFor(const ModuleInfo& info) {
  if (last_module != nullptr && last_path == info.path && last_build_id == info.build_id) {
    return *last_module;
  }
  std::string key = info.path;
  key += '\0';
  key += info.build_id;
  auto [it, inserted] = modules.try_emplace(std::move(key));
  if (inserted) {
    it->second = std::make_unique<Module>();
    Module& m = *it->second;
    m.path = info.path;
    m.cache_path = isSpecialModule(info.path) ? "" : SymbolCachePath(info, options.debug_dirs);
    if (m.cache_path.empty() || !LoadSymbolCache(m.cache_path, info.path, m.cache[0], m.cache[1]))
      openOnce(m, info);
  }
  last_module = it->second.get();
  last_path = info.path;
  last_build_id = info.build_id;
  return *last_module;
}

void Symbolizer::Impl::open(Module& m, const ModuleInfo& info) {
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
    if (length <= 0 || std::string(reinterpret_cast<const char*>(bits), length) != info.build_id) {
      warn(path + ": build-id differs from the profiled binary (rebuilt since the run?); its " +
           "symbols may be wrong");
      m.cache_path.clear();  // answers that may be wrong are not kept
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

std::string Symbolizer::Impl::filePath(Module& m, const char* name, const std::string& comp_dir) {
  if (name == nullptr) return {};
  auto [it, inserted] = m.file_names.try_emplace(name);
  if (inserted) it->second = NormalPath(name, comp_dir);
  return it->second;
}

std::pair<std::string, uint32_t> Symbolizer::Impl::lineAt(Module& m, CompileUnit& unit,
                                                          uint64_t pc) {
  Dwarf_Line* line = dwarf_getsrc_die(&unit.die, pc);
  if (line == nullptr) return {};
  int number = 0;
  if (dwarf_lineno(line, &number) != 0 || number < 0) number = 0;
  return {filePath(m, dwarf_linesrc(line, nullptr, nullptr), unit.comp_dir),
          static_cast<uint32_t>(number)};
}

void Symbolizer::Impl::symbolize(Module& m, uint64_t vaddr, std::vector<ResolvedFrame>& frames) {
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

bool Symbolizer::Impl::symbolizeDwarf(Module& m, CompileUnit& unit, uint64_t pc,
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

std::string Symbolizer::Impl::callFile(Module& m, CompileUnit& unit, Dwarf_Die& die) {
  std::optional<uint64_t> index = unsignedAttribute(&die, DW_AT_call_file);
  if (!index) return {};
  Dwarf_Files* files = nullptr;
  size_t count = 0;
  if (dwarf_getsrcfiles(&unit.die, &files, &count) != 0 || *index >= count) return {};
  return filePath(m, dwarf_filesrc(files, *index, nullptr, nullptr), unit.comp_dir);
}

void Symbolizer::Impl::symbolizeSymbol(Module& m, uint64_t dwfl_address, CompileUnit* unit,
                                       uint64_t pc, std::vector<ResolvedFrame>& frames) {
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
  impl_->openOnce(m, module);  // an address the kept answers lack
  if (m.mod != nullptr) {
    // A return address points after the call; one byte back is inside the call instruction.
    impl_->symbolize(m, is_return_address && vaddr > 0 ? vaddr - 1 : vaddr, result.frames);
    m.cache_grew = true;
  }
  return result;
}

const std::vector<std::string>& Symbolizer::warnings() const { return impl_->warnings; }

}  // namespace hotline::symbolize

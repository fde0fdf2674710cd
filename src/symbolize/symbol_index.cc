// The functions of a module's symbol table by address: read once from .symtab (else .dynsym) and
// MiniDebugInfo, the PLT's stubs added as `name@plt`, each name demangled on first use.
#include "symbolize/symbol_index.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace hotline::symbolize {

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

uint64_t SymbolIndex::SectionEnd(Elf* elf, GElf_Word section, Dwarf_Addr bias, uint64_t address) {
  GElf_Shdr header;
  Elf_Scn* scn = elf ? elf_getscn(elf, section) : nullptr;
  if (!scn || !gelf_getshdr(scn, &header) || header.sh_size == 0) return address;
  uint64_t end = header.sh_addr + bias + header.sh_size;
  return end > address ? end : address;
}

void SymbolIndex::build(Dwfl_Module* mod) {
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

const std::string* SymbolIndex::find(uint64_t address, uint64_t* start) {
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

void SymbolIndex::addPltStubs(Dwfl_Module* mod) {
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

void SymbolIndex::addSlots(Elf* elf, Elf_Scn* scn, const GElf_Shdr& header,
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

const std::string* SymbolIndex::name(Symbol& symbol, uint64_t* start) {
  if (!symbol.ready) {
    symbol.demangled = demangle(symbol.raw);
    symbol.ready = true;
  }
  if (start != nullptr) *start = symbol.start;
  return &symbol.demangled;
}

}  // namespace hotline::symbolize

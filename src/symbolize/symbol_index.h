// SymbolIndex: a module's symbol table indexed by address, with the PLT's stubs named after the
// functions they jump to. Internal to src/symbolize.
#pragma once

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace hotline::symbolize {

// C++ (Itanium ABI) names demangled; anything else as it is.
std::string demangle(const char* name);

// The functions of a module's symbol table (.symtab, else .dynsym, plus a MiniDebugInfo table),
// sorted by address. libdwfl's own address-to-symbol lookup scans the whole table for every
// address, far too slow for 100k addresses in a large library, so it is indexed once here.
class SymbolIndex {
 public:
  // A symbol without a size (crti's _init, hand-written assembler) reaches at most to the end
  // of its section: code after it in another section (the PLT after .init) is not its.
  static uint64_t SectionEnd(Elf* elf, GElf_Word section, Dwarf_Addr bias, uint64_t address);

  void build(Dwfl_Module* mod);

  // Whether the module has no symbol table: the PLT stubs' names alone do not make one.
  bool empty() const { return !has_symbols_; }

  // The demangled name of the function containing `address` and where it starts; a symbol
  // without a size (hand-written assembler) counts as reaching up to the address when it is
  // the nearest one below and no sized symbol contains the address.
  const std::string* find(uint64_t address, uint64_t* start);

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
  void addPltStubs(Dwfl_Module* mod);

  // The GOT slots a relocation section fills with functions, and their names.
  static void addSlots(Elf* elf, Elf_Scn* scn, const GElf_Shdr& header,
                       std::unordered_map<uint64_t, const char*>& slots);
  const std::string* name(Symbol& symbol, uint64_t* start);
  std::vector<Symbol> symbols_;
  std::vector<uint64_t> max_end_;
  bool has_symbols_ = false;
};

}  // namespace hotline::symbolize

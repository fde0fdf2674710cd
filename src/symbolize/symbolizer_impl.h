// Symbolizer::Impl: the modules opened so far, each with its symbol table and DWARF index, and
// the steps of resolving an address, defined by part: opening modules and resolving
// (symbolizer.cc), indexing DWARF (dwarf_index.cc), naming functions (function_names.cc).
// Internal to src/symbolize.
#pragma once

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "symbolize/dwarf_index.h"
#include "symbolize/symbol_index.h"
#include "symbolize/symbolizer.h"

namespace hotline::symbolize {

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
    // Opened (libdwfl, DWARF) on the first address the kept answers (symbol_cache.h) lack.
    bool opened = false;
    std::string cache_path;  // where its answers are kept between commands ("" : not kept)
    bool cache_grew = false;
  };

  explicit Impl(SymbolizerOptions opts);
  ~Impl();  // keeps what was learned about modules with DWARF

  void warn(std::string message);

  Module& moduleFor(const ModuleInfo& info);

  void open(Module& m, const ModuleInfo& info);
  void openOnce(Module& m, const ModuleInfo& info);

  // One pass over the unit headers: which unit covers which addresses. The DIEs inside a unit
  // are read only when an address first falls into it.
  static void indexUnits(Module& m);

  static void indexRangelessUnits(Module& m);

  // The unit containing `pc` (a DWARF address), indexed.
  static CompileUnit* unitAt(Module& m, uint64_t pc);

  // Compilation directory and language of the unit an attribute was read from.
  const std::pair<std::string, int>& unitFacts(Module& m, Dwarf_CU* cu);

  // Reads a unit's DIE tree once, keeping every subprogram and inlined subroutine that owns
  // code, nested as the DWARF nests them. Iterative, so hostile nesting cannot overflow the stack.
  static void indexScopes(CompileUnit& unit);

  std::string filePath(Module& m, const char* name, const std::string& comp_dir);

  // File and line of the line-table row covering `pc`, if there is one.
  std::pair<std::string, uint32_t> lineAt(Module& m, CompileUnit& unit, uint64_t pc);

  void describe(Module& m, CompileUnit& unit, Scope& scope);

  // GCC gives a function declared earlier in another file (malloc, after stdlib.h's prototype)
  // that declaration's DW_AT_decl_file and line. When none of the function's code is in the
  // declared file, its place is its first line in the unit's own source (else its first line).
  void placeAtDefinition(Module& m, CompileUnit& unit, Scope& scope);

  // C++ functions without a linkage name are those of local types: lambdas, and templates
  // instantiated over them. Their DWARF names are the same for every such function (every
  // lambda's call operator is `operator()`, `run<main()::<lambda(int)> >` stands for each
  // lambda's instantiation), so two of them would be one row. What tells them apart is the
  // symbol at an out-of-line function's entry (`run<main::{lambda(int)#2}>`), and, for a lambda,
  // where it is written.
  void nameWithoutLinkage(Module& m, CompileUnit& unit, Scope& scope, const std::string& comp_dir);

  // The out-of-line copy, in the same unit, of the function an inlined scope is a copy of (the
  // subprogram with the same abstract origin); null when there is none.
  static Scope* outOfLineCopy(CompileUnit& unit, const Scope& inlined);

  // The symbol-table name at a Dwfl address, demangled; "" when there is none.
  static std::string symbolName(Module& m, uint64_t dwfl_address, uint64_t* symbol_start);

  void symbolize(Module& m, uint64_t vaddr, std::vector<ResolvedFrame>& frames);

  bool symbolizeDwarf(Module& m, CompileUnit& unit, uint64_t pc,
                      std::vector<ResolvedFrame>& frames);

  std::string callFile(Module& m, CompileUnit& unit, Dwarf_Die& die);

  void symbolizeSymbol(Module& m, uint64_t dwfl_address, CompileUnit* unit, uint64_t pc,
                       std::vector<ResolvedFrame>& frames);

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

}  // namespace hotline::symbolize

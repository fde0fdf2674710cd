#include "symbolize/code_map.h"

#include <capstone/capstone.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>

#include "symbolize/debug_binary.h"
#include "symbolize/line_table.h"
#include "symbolize/symbol_index.h"

namespace hotline::symbolize {
namespace {

struct Symbol {
  uint64_t start, size;
  std::string name;  // demangled, as gcov names functions
};

}  // namespace

Expected<CodeMap> BuildCodeMap(const std::string& path) {
  Expected<std::unique_ptr<DebugBinary>> binary = OpenDebugBinary(path, "weighed");
  if (!binary) return binary.status();
  Elf* elf = (*binary)->elf;
  std::vector<LineRow> rows = LineRows((*binary)->dwarf);
  if (rows.empty()) return Status::Error(path + ": no line table");

  // Function symbols, for the ranges to disassemble and the names of call targets.
  std::vector<Symbol> symbols;
  ForEachSymbol(elf, [&](const GElf_Sym& sym, const char* name) {
    if (GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_size)
      symbols.push_back(Symbol{sym.st_value, sym.st_size, demangle(name)});
  });
  std::sort(symbols.begin(), symbols.end(),
            [](const Symbol& a, const Symbol& b) { return a.start < b.start; });
  auto symbol_at = [&](uint64_t address) -> const Symbol* {
    auto it = std::upper_bound(symbols.begin(), symbols.end(), address,
                               [](uint64_t a, const Symbol& s) { return a < s.start; });
    if (it == symbols.begin()) return nullptr;
    --it;
    return address < it->start + it->size ? &*it : nullptr;
  };

  csh handle;
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK)
    return Status::Error("capstone cannot disassemble x86-64");
  std::unique_ptr<csh, void (*)(csh*)> cs_owner(&handle, [](csh* h) { cs_close(h); });
  cs_option(handle, CS_OPT_DETAIL, CS_OPT_ON);

  CodeMap map;
  FileNames files;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn))) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR))
      continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data || !data->d_buf) continue;
    for (const Symbol& s : symbols) {
      if (s.start < sh.sh_addr || s.start + s.size > sh.sh_addr + sh.sh_size) continue;
      const auto* code = static_cast<const uint8_t*>(data->d_buf) + (s.start - sh.sh_addr);
      size_t size = s.size;
      uint64_t address = s.start;
      CodeFunction fn;
      fn.name = s.name;
      std::map<std::pair<std::string, uint32_t>, uint32_t> lines;
      std::map<std::tuple<std::string, uint32_t, std::string>, uint32_t> calls;
      cs_insn* insn = cs_malloc(handle);
      while (cs_disasm_iter(handle, &code, &size, &address, insn)) {
        const LineRow* row = RowAt(rows, insn->address);
        if (!row) continue;
        const std::string& file = files.of(*row);
        ++lines[{file, row->line}];
        bool is_call = false;
        for (uint8_t g = 0; g < insn->detail->groups_count; ++g)
          is_call |= insn->detail->groups[g] == CS_GRP_CALL;
        const cs_x86& x86 = insn->detail->x86;
        if (is_call && x86.op_count == 1 && x86.operands[0].type == X86_OP_IMM) {
          if (const Symbol* target = symbol_at(uint64_t(x86.operands[0].imm)))
            ++calls[{file, row->line, target->name}];
        }
      }
      cs_free(insn, 1);
      for (const auto& [key, n] : lines) fn.lines.push_back(CodeLine{key.first, key.second, n});
      for (const auto& [key, n] : calls)
        fn.calls.push_back(CodeCall{std::get<0>(key), std::get<1>(key), std::get<2>(key), n});
      map.functions.push_back(std::move(fn));
    }
  }
  return map;
}

}  // namespace hotline::symbolize

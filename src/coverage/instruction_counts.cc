#include "coverage/instruction_counts.h"

#include <capstone/capstone.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "coverage/block_flow.h"
#include "coverage/gcda.h"
#include "coverage/profraw.h"
#include "symbolize/debug_binary.h"
#include "symbolize/line_table.h"
#include "symbolize/symbol_index.h"

namespace hotline::coverage {
namespace {

// Functions that never return to their caller: a call to one ends its block with no successor.
// The program's own are known from DWARF (DW_AT_noreturn, on definitions and on the declarations
// of what it calls); these are the C library's and the C++ runtime's, whose declarations a unit
// need not carry.
const std::set<std::string>& KnownNoReturn() {
  static const std::set<std::string> names = {"abort",
                                              "exit",
                                              "_exit",
                                              "_Exit",
                                              "quick_exit",
                                              "__assert_fail",
                                              "__stack_chk_fail",
                                              "longjmp",
                                              "siglongjmp",
                                              "__longjmp_chk",
                                              "pthread_exit",
                                              "err",
                                              "errx",
                                              "verr",
                                              "verrx",
                                              "__cxa_throw",
                                              "__cxa_rethrow",
                                              "_Unwind_Resume",
                                              "__cxa_bad_cast",
                                              "__cxa_bad_typeid",
                                              "__cxa_pure_virtual",
                                              "__cxa_throw_bad_array_new_length",
                                              "__fortify_fail",
                                              "__chk_fail",
                                              "_gfortran_stop_string",
                                              "_gfortran_error_stop_string",
                                              "_gfortran_runtime_error",
                                              "_gfortran_runtime_error_at",
                                              "_gfortran_os_error_at"};
  return names;
}

// Names of the functions DWARF marks noreturn, raw (linkage) names and plain ones.
void NoReturnFromDwarf(Dwarf_Die* die, std::set<std::string>& out) {
  Dwarf_Die child;
  if (dwarf_child(die, &child) != 0) return;
  do {
    int tag = dwarf_tag(&child);
    if (tag == DW_TAG_subprogram && dwarf_hasattr(&child, DW_AT_noreturn)) {
      Dwarf_Attribute attr;
      bool flag = false;
      if (dwarf_attr(&child, DW_AT_noreturn, &attr) && dwarf_formflag(&attr, &flag) == 0 && flag) {
        if (const char* n = dwarf_diename(&child)) out.insert(n);
        if (dwarf_attr(&child, DW_AT_linkage_name, &attr))
          if (const char* n = dwarf_formstring(&attr)) out.insert(n);
      }
    }
    if (tag == DW_TAG_namespace || tag == DW_TAG_structure_type || tag == DW_TAG_class_type)
      NoReturnFromDwarf(&child, out);
  } while (dwarf_siblingof(&child, &child) == 0);
}

// The ELF file's contents by address, with the pointers a position-independent binary leaves
// to its loader (R_X86_64_RELATIVE) read as the loader would.
class Image {
 public:
  explicit Image(Elf* elf) : elf_(elf) {
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(elf, scn))) {
      GElf_Shdr sh;
      if (!gelf_getshdr(scn, &sh)) continue;
      const char* name = elf_strptr(elf, section_names(), sh.sh_name);
      Elf_Data* data = sh.sh_type == SHT_NOBITS ? nullptr : elf_getdata(scn, nullptr);
      if (sh.sh_addr && (sh.sh_flags & SHF_ALLOC))
        sections_.push_back(Section{sh.sh_addr, sh.sh_size,
                                    data ? static_cast<const uint8_t*>(data->d_buf) : nullptr,
                                    (sh.sh_flags & SHF_EXECINSTR) != 0, name ? name : ""});
      if (sh.sh_type == SHT_RELA && data && sh.sh_entsize) {
        bool plt = name && std::strcmp(name, ".rela.plt") == 0;
        for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; ++i) {
          GElf_Rela rela;
          if (!gelf_getrela(data, int(i), &rela)) continue;
          if (GELF_R_TYPE(rela.r_info) == R_X86_64_RELATIVE)
            relative_[rela.r_offset] = uint64_t(rela.r_addend);
          if (plt) plt_symbols_.push_back({sh.sh_link, GELF_R_SYM(rela.r_info)});
        }
      }
    }
  }

  const uint8_t* at(uint64_t address, uint64_t size) const {
    for (const Section& s : sections_)
      if (s.bytes && address >= s.address && address + size <= s.address + s.size)
        return s.bytes + (address - s.address);
    return nullptr;
  }
  std::optional<uint64_t> pointer(uint64_t address) const {
    if (auto it = relative_.find(address); it != relative_.end()) return it->second;
    const uint8_t* p = at(address, 8);
    if (!p) return std::nullopt;
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  std::optional<uint32_t> u32(uint64_t address) const {
    const uint8_t* p = at(address, 4);
    if (!p) return std::nullopt;
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  std::string cstring(uint64_t address) const {
    std::string s;
    for (const uint8_t* p; (p = at(address, 1)) && *p && s.size() < 4096; ++address)
      s.push_back(char(*p));
    return s;
  }
  // A section's address and size.
  std::optional<std::pair<uint64_t, uint64_t>> section(const std::string& name) const {
    for (const Section& s : sections_)
      if (s.name == name) return std::pair{s.address, s.size};
    return std::nullopt;
  }
  bool readOnlyData(uint64_t address) const {
    for (const Section& s : sections_)
      if (address >= s.address && address < s.address + s.size) return !s.code;
    return false;
  }
  // The name a PLT stub stands for (.plt.sec's 16-byte stubs, else .plt's after its header).
  std::string pltName(uint64_t address) const {
    for (const Section& s : sections_) {
      bool sec = s.name == ".plt.sec";
      if ((!sec && s.name != ".plt") || address < s.address || address >= s.address + s.size)
        continue;
      bool has_sec = std::any_of(sections_.begin(), sections_.end(),
                                 [](const Section& x) { return x.name == ".plt.sec"; });
      if (!sec && has_sec) return "";
      int64_t index = int64_t((address - s.address) / 16) - (sec ? 0 : 1);
      if (index < 0 || size_t(index) >= plt_symbols_.size()) return "";
      auto [link, symbol] = plt_symbols_[size_t(index)];
      Elf_Scn* dynsym = elf_getscn(elf_, link);
      GElf_Shdr sh;
      Elf_Data* data = dynsym ? elf_getdata(dynsym, nullptr) : nullptr;
      GElf_Sym sym;
      if (!data || !gelf_getshdr(dynsym, &sh) || !gelf_getsym(data, int(symbol), &sym)) return "";
      const char* name = elf_strptr(elf_, sh.sh_link, sym.st_name);
      return name ? name : "";
    }
    return "";
  }

 private:
  // The section holding the sections' names.
  size_t section_names() const {
    size_t index = 0;
    elf_getshdrstrndx(elf_, &index);
    return index;
  }
  struct Section {
    uint64_t address, size;
    const uint8_t* bytes;
    bool code;
    std::string name;
  };
  Elf* elf_;
  std::vector<Section> sections_;
  std::unordered_map<uint64_t, uint64_t> relative_;
  std::vector<std::pair<size_t, size_t>> plt_symbols_;  // (dynsym section, symbol) per slot
};

struct Symbol {
  uint64_t start, size;
  std::string name;  // raw
};

// The run's counters, by the address of their array in the binary.
struct CounterArrays {
  struct Array {
    uint64_t start;
    const std::vector<uint64_t>* values;
  };
  std::map<uint64_t, Array> by_start;
  // The value this run left in the counter slot at `address`; none if no slot is there.
  std::optional<uint64_t> slot(uint64_t address) const {
    auto it = by_start.upper_bound(address);
    if (it == by_start.begin()) return std::nullopt;
    --it;
    uint64_t index = (address - it->first) / 8;
    if ((address - it->first) % 8 || index >= it->second.values->size()) return std::nullopt;
    return (*it->second.values)[index];
  }
};

// Lines by (function, file, line).
using LineMap = std::map<std::tuple<std::string, std::string, uint32_t>, LineInstructions>;

enum class Flow { kNext, kBranch, kJump, kIndirect, kExit };

struct Insn {
  uint64_t address = 0;
  uint32_t size = 0;
  Flow flow = Flow::kNext;
  uint64_t target = 0;            // kBranch, kJump: where to
  std::vector<uint64_t> targets;  // kIndirect: the jump table's
  uint64_t counter = 0;           // a counter slot this instruction touches (0: none)
  enum { kNone, kIncrement, kLoad, kStore, kOther } use = kNone;
  uint64_t increments = 0;  // kIncrement: by how much
  bool padding = false;     // a no-op the assembler aligns code with
  bool via_plt = false;     // a call through a PLT stub, whose jump callgrind charges here
};

class Counter {
 public:
  Counter(Elf* elf, Dwarf* dwarf, const Image& image, const std::vector<Symbol>& functions,
          const CounterArrays& arrays, std::set<std::string> noreturn)
      : elf_(elf),
        image_(image),
        functions_(functions),
        arrays_(arrays),
        noreturn_(std::move(noreturn)),
        rows_(symbolize::LineRows(dwarf)) {
    cs_open(CS_ARCH_X86, CS_MODE_64, &cs_);
    cs_option(cs_, CS_OPT_DETAIL, CS_OPT_ON);
  }
  ~Counter() { cs_close(&cs_); }

  // One function (its main part and any `.cold` part) as a flow graph of its own, with the
  // counter slots its blocks increment; false if its code cannot be followed.
  struct Function {
    std::string name;  // raw
    std::vector<Insn> code;
    std::vector<size_t> first;  // each block's first instruction
    FlowGraph graph;            // without counters: they may be shared with other functions
    std::vector<std::pair<uint64_t, std::pair<int, uint64_t>>> sites;  // slot, (block, times)
    size_t last(int b) const {
      return (size_t(b) + 1 < first.size() ? first[size_t(b) + 1] : code.size()) - 1;
    }
  };

  enum class Built { kCounted, kNoCounters, kNotFollowed };

  Built build(const std::vector<const Symbol*>& parts, Function& f) {
    f.name = parts.front()->name;
    std::vector<Insn>& code = f.code;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (const Symbol* s : parts) {
      ranges.push_back({s->start, s->start + s->size});
      if (!disassemble(*s, code)) return Built::kNotFollowed;
    }
    auto inside = [&](uint64_t a) {
      return std::any_of(ranges.begin(), ranges.end(),
                         [&](const auto& r) { return a >= r.first && a < r.second; });
    };
    // Code the run did not count (crt, the coverage runtimes, which only take the counters'
    // addresses).
    if (!std::any_of(code.begin(), code.end(),
                     [](const Insn& i) { return i.counter != 0 && i.use != Insn::kOther; }))
      return Built::kNoCounters;
    for (Insn& i : code)
      if (i.flow == Flow::kIndirect && !jumpTable(code, i, inside)) return Built::kNotFollowed;

    // Blocks: a leader at each part's start, each target, and after each change of flow.
    std::set<uint64_t> leaders;
    for (const auto& r : ranges) leaders.insert(r.first);
    for (const Insn& i : code) {
      if (i.flow != Flow::kNext) leaders.insert(i.address + i.size);
      if ((i.flow == Flow::kBranch || i.flow == Flow::kJump) && inside(i.target))
        leaders.insert(i.target);
      for (uint64_t t : i.targets) leaders.insert(t);
    }
    std::unordered_map<uint64_t, int> block_at;
    for (size_t k = 0; k < code.size(); ++k) {
      bool new_range = k == 0 || code[k - 1].address + code[k - 1].size != code[k].address;
      if (new_range || leaders.count(code[k].address)) {
        block_at[code[k].address] = int(f.first.size());
        f.first.push_back(k);
      }
    }
    int blocks = int(f.first.size());
    FlowGraph& graph = f.graph;
    graph.blocks = blocks;
    auto block_of = [&](uint64_t a) {
      auto it = block_at.find(a);
      return it == block_at.end() ? FlowGraph::kOutside : it->second;
    };
    std::vector<bool> entered(size_t(blocks), false);
    auto edge = [&](int from, int to) {
      graph.edges.push_back({from, to});
      if (to >= 0) entered[size_t(to)] = true;
    };
    edge(FlowGraph::kOutside, block_of(parts.front()->start));
    for (int b = 0; b < blocks; ++b) {
      const Insn& last = code[f.last(b)];
      uint64_t next = last.address + last.size;
      switch (last.flow) {
        case Flow::kNext:
          edge(b, inside(next) ? block_of(next) : FlowGraph::kOutside);
          break;
        case Flow::kBranch:
          edge(b, inside(last.target) ? block_of(last.target) : FlowGraph::kOutside);
          edge(b, inside(next) ? block_of(next) : FlowGraph::kOutside);
          break;
        case Flow::kJump:
          edge(b, inside(last.target) ? block_of(last.target) : FlowGraph::kOutside);
          break;
        case Flow::kIndirect: {
          std::set<uint64_t> distinct(last.targets.begin(), last.targets.end());
          for (uint64_t t : distinct) edge(b, block_of(t));
          break;
        }
        case Flow::kExit:
          edge(b, FlowGraph::kOutside);
          break;
      }
    }
    // A block nothing flows into is entered from outside (a landing pad the unwinder jumps
    // to), unless it is the padding between functions or before a loop: it never runs.
    for (int b = 0; b < blocks; ++b) {
      bool padding = true;
      for (size_t k = f.first[size_t(b)]; k <= f.last(b); ++k) padding &= code[k].padding;
      if (!entered[size_t(b)] && !padding) edge(FlowGraph::kOutside, b);
    }

    // Counter sites: an increment in memory, or a load and a store of the slot in one block.
    for (int b = 0; b < blocks; ++b) {
      std::map<uint64_t, int> loaded;  // slot → loads not yet stored
      for (size_t k = f.first[size_t(b)]; k <= f.last(b); ++k) {
        const Insn& i = code[k];
        if (i.use == Insn::kIncrement) {
          f.sites.push_back({i.counter, {b, i.increments}});
        } else if (i.use == Insn::kLoad) {
          ++loaded[i.counter];
        } else if (i.use == Insn::kStore && loaded[i.counter] > 0) {
          --loaded[i.counter];
          f.sites.push_back({i.counter, {b, 1}});
        } else if (i.use != Insn::kNone) {
          return Built::kNotFollowed;  // kept in a register across blocks
        }
      }
      for (const auto& [slot, n] : loaded)
        if (n) return Built::kNotFollowed;
    }
    return Built::kCounted;
  }

  // Solves functions that share counters together (an inlined copy increments its callee's),
  // and adds what they ran to `out`.
  void solve(std::vector<Function>& functions, InstructionCounts& out, LineMap& lines) {
    std::vector<size_t> parent(functions.size());
    std::iota(parent.begin(), parent.end(), 0);
    std::function<size_t(size_t)> root = [&](size_t x) {
      return parent[x] == x ? x : parent[x] = root(parent[x]);
    };
    std::unordered_map<uint64_t, size_t> owner;
    for (size_t k = 0; k < functions.size(); ++k)
      for (const auto& [slot, site] : functions[k].sites) {
        auto [it, added] = owner.try_emplace(slot, k);
        if (!added) parent[root(k)] = root(it->second);
      }
    std::map<size_t, std::vector<size_t>> groups;
    for (size_t k = 0; k < functions.size(); ++k) groups[root(k)].push_back(k);
    for (const auto& [r, members] : groups) {
      FlowGraph graph;
      std::vector<int> offset;
      std::map<uint64_t, size_t> counter_of;
      for (size_t k : members) {
        const Function& f = functions[k];
        offset.push_back(graph.blocks);
        for (FlowGraph::Edge e : f.graph.edges) {
          if (e.from >= 0) e.from += graph.blocks;
          if (e.to >= 0) e.to += graph.blocks;
          graph.edges.push_back(e);
        }
        for (const auto& [slot, site] : f.sites) {
          auto [it, added] = counter_of.try_emplace(slot, graph.counters.size());
          if (added) graph.counters.push_back({*arrays_.slot(slot), {}});
          graph.counters[it->second].sites.push_back({site.first + graph.blocks, site.second});
        }
        graph.blocks += f.graph.blocks;
      }
      FlowCounts counts = SolveFlow(graph);
      for (size_t m = 0; m < members.size(); ++m) {
        const Function& f = functions[members[m]];
        if (!counts.consistent) {
          out.not_counted.push_back(symbolize::demangle(f.name.c_str()));
          continue;
        }
        add(f, counts, offset[m], out, lines);
      }
    }
  }

 private:
  void add(const Function& f, const FlowCounts& counts, int offset, InstructionCounts& out,
           LineMap& lines) {
    FunctionInstructions fn;
    fn.name = symbolize::demangle(f.name.c_str());
    // The blocks whose count is not determined, weighed by their instructions: for the whole
    // function and for each line. Their sum may still be (copies sharing a counter).
    using Form = std::map<int, uint64_t>;
    Form function_form;
    std::map<LineInstructions*, Form> line_forms;
    for (int b = 0; b < f.graph.blocks; ++b) {
      const std::optional<uint64_t>& exact = counts.exact[size_t(b + offset)];
      for (size_t k = f.first[size_t(b)]; k <= f.last(b); ++k) {
        const Insn& i = f.code[k];
        const symbolize::LineRow* row = symbolize::RowAt(rows_, i.address);
        const std::string* file = row ? &files_.of(*row) : nullptr;
        if (fn.file.empty() && file) fn.file = *file;
        LineInstructions* line = nullptr;
        if (row) {
          line = &lines[{fn.name, *file, row->line}];
          line->function = fn.name;
          line->file = *file;
          line->line = row->line;
        }
        uint64_t instructions = i.via_plt ? 2 : 1;
        if (exact) {
          fn.executed += *exact * instructions;
          if (line) line->executed += *exact * instructions;
          if (i.use == Insn::kIncrement || i.use == Insn::kStore) out.counter_increments += *exact;
        } else {
          function_form[b + offset] += instructions;
          if (line) line_forms[line][b + offset] += instructions;
        }
      }
    }
    // A sum the equations fix is counted; else its blocks are uncounted, with their bound.
    auto settle = [&](const Form& form, uint64_t& executed, uint64_t& uncounted, bool& unbounded) {
      if (form.empty()) return;
      if (auto fixed = counts.sum({form.begin(), form.end()})) {
        executed += *fixed;
        return;
      }
      uint64_t added = 0;
      bool open = false;
      for (const auto& [b, weight] : form) {
        uint64_t most = counts.most[size_t(b)];
        if (most == FlowCounts::kUnbounded)
          open = true;
        else
          added += most * weight;
      }
      // The linear program's range where it has one, which knows blocks sharing a counter: the
      // least is counted (at least that ran), the rest is uncounted.
      auto range = counts.range_of({form.begin(), form.end()});
      if (range && (open || range->second < added)) {
        executed += range->first;
        uncounted += range->second - range->first;
        return;
      }
      unbounded |= open;
      uncounted += added;
    };
    settle(function_form, fn.executed, fn.uncounted, fn.unbounded);
    for (auto& [line, form] : line_forms)
      settle(form, line->executed, line->uncounted, line->unbounded);
    out.functions.push_back(std::move(fn));
  }

  bool disassemble(const Symbol& s, std::vector<Insn>& code) {
    const uint8_t* bytes = image_.at(s.start, s.size);
    if (!bytes) return false;
    size_t size = s.size;
    uint64_t address = s.start;
    cs_insn* insn = cs_malloc(cs_);
    std::unique_ptr<cs_insn, std::function<void(cs_insn*)>> owner(
        insn, [](cs_insn* i) { cs_free(i, 1); });
    while (size > 0) {
      uint64_t at = address;
      if (!cs_disasm_iter(cs_, &bytes, &size, &address, insn)) return false;
      Insn i;
      i.address = at;
      i.size = uint32_t(insn->size);
      classify(*insn, i);
      code.push_back(std::move(i));
    }
    return true;
  }

  void classify(const cs_insn& insn, Insn& i) {
    const cs_detail& d = *insn.detail;
    const cs_x86& x86 = d.x86;
    auto in_group = [&](uint8_t g) {
      return std::find(d.groups, d.groups + d.groups_count, g) != d.groups + d.groups_count;
    };
    if (in_group(CS_GRP_JUMP)) {
      bool direct = x86.op_count == 1 && x86.operands[0].type == X86_OP_IMM;
      if (!direct) {
        i.flow = Flow::kIndirect;
      } else {
        i.flow = insn.id == X86_INS_JMP ? Flow::kJump : Flow::kBranch;
        i.target = uint64_t(x86.operands[0].imm);
      }
    } else if (in_group(CS_GRP_RET) || in_group(CS_GRP_IRET) || insn.id == X86_INS_HLT ||
               insn.id == X86_INS_UD2) {
      i.flow = Flow::kExit;
    } else if (in_group(CS_GRP_CALL) && x86.op_count == 1 && x86.operands[0].type == X86_OP_IMM) {
      uint64_t target = uint64_t(x86.operands[0].imm);
      std::string stub = image_.pltName(target);  // what a PLT stub stands for, once
      i.via_plt = !stub.empty();
      if (noReturn(target, stub)) i.flow = Flow::kExit;
    }
    i.padding =
        insn.id == X86_INS_NOP || insn.id == X86_INS_INT3 ||
        (insn.id == X86_INS_XCHG && x86.op_count == 2 && x86.operands[0].type == X86_OP_REG &&
         x86.operands[1].type == X86_OP_REG && x86.operands[0].reg == x86.operands[1].reg);
    // A memory operand in a counter array: how the instruction uses the slot.
    for (uint8_t k = 0; k < x86.op_count; ++k) {
      const cs_x86_op& op = x86.operands[k];
      if (op.type != X86_OP_MEM || op.mem.base != X86_REG_RIP || op.mem.index != X86_REG_INVALID)
        continue;
      uint64_t address = insn.address + insn.size + uint64_t(op.mem.disp);
      if (!arrays_.slot(address)) continue;
      i.counter = address;
      bool first = k == 0;
      if (first && (insn.id == X86_INS_ADD || insn.id == X86_INS_INC) &&
          (insn.id == X86_INS_INC ||
           (x86.op_count == 2 && x86.operands[1].type == X86_OP_IMM && x86.operands[1].imm > 0))) {
        i.use = Insn::kIncrement;
        i.increments = insn.id == X86_INS_INC ? 1 : uint64_t(x86.operands[1].imm);
      } else if (insn.id == X86_INS_MOV && first) {
        i.use = Insn::kStore;
      } else if (insn.id == X86_INS_MOV) {
        i.use = Insn::kLoad;
      } else {
        i.use = Insn::kOther;
      }
    }
  }

  // Whether a call to `target` (`stub`: the PLT stub's function, if it is one) never returns.
  bool noReturn(uint64_t target, std::string name) {
    auto it = std::upper_bound(functions_.begin(), functions_.end(), target,
                               [](uint64_t a, const Symbol& s) { return a < s.start; });
    if (it != functions_.begin() && target < std::prev(it)->start + std::prev(it)->size)
      name = std::prev(it)->name;
    if (name.empty()) return false;
    if (size_t at = name.find('@'); at != std::string::npos) name.resize(at);
    return noreturn_.count(name) || KnownNoReturn().count(name);
  }

  // The targets of an indirect jump through a table. The load before the jump reads the
  // table: 4-byte offsets from the table's start (gcc's position-independent tables) or 8-byte
  // addresses (computed gotos, absolute tables). The table's address is the load's displacement,
  // or what a `lea` put in its base register: just before, or once for the whole function (an
  // interpreter's dispatch table, kept in a register). Entries are read while they land in the
  // function, at most as many as a preceding `cmp reg, N; ja` allows.
  bool jumpTable(const std::vector<Insn>& code, Insn& jump,
                 const std::function<bool(uint64_t)>& inside) {
    size_t k = size_t(&jump - code.data());
    uint64_t table = 0, bound = 4096;
    int entry = 0;
    x86_reg base = X86_REG_INVALID;
    auto decode = [&](const Insn& at, const std::function<void(const cs_insn&)>& use) {
      const uint8_t* bytes = image_.at(at.address, at.size);
      size_t size = at.size;
      uint64_t address = at.address;
      cs_insn* insn = cs_malloc(cs_);
      if (bytes && cs_disasm_iter(cs_, &bytes, &size, &address, insn)) use(*insn);
      cs_free(insn, 1);
    };
    auto lea_into = [&](const cs_insn& insn, x86_reg reg) -> uint64_t {
      const cs_x86& x86 = insn.detail->x86;
      if (insn.id != X86_INS_LEA || x86.op_count != 2 || x86.operands[0].reg != reg ||
          x86.operands[1].mem.base != X86_REG_RIP)
        return 0;
      uint64_t t = insn.address + insn.size + uint64_t(x86.operands[1].mem.disp);
      return image_.readOnlyData(t) ? t : 0;
    };
    for (size_t back = 1; back <= 12 && back <= k; ++back) {
      decode(code[k - back], [&](const cs_insn& insn) {
        const cs_x86& x86 = insn.detail->x86;
        for (uint8_t o = 0; o < x86.op_count && !entry; ++o) {
          const cs_x86_op& op = x86.operands[o];
          if (op.type == X86_OP_MEM && op.mem.index != X86_REG_INVALID &&
              (op.mem.scale == 4 || op.mem.scale == 8)) {
            entry = op.mem.scale;
            base = x86_reg(op.mem.base);
            if (base == X86_REG_INVALID) table = uint64_t(op.mem.disp);
          }
        }
        if (!table && base != X86_REG_INVALID) table = lea_into(insn, base);
        if (insn.id == X86_INS_CMP && x86.op_count == 2 && x86.operands[1].type == X86_OP_IMM &&
            x86.operands[1].imm >= 0 && bound == 4096)
          bound = uint64_t(x86.operands[1].imm) + 1;
      });
    }
    if (!table && base != X86_REG_INVALID) {
      std::set<uint64_t> found;
      for (const Insn& i : code)
        decode(i, [&](const cs_insn& insn) {
          if (uint64_t t = lea_into(insn, base)) found.insert(t);
        });
      if (found.size() == 1) table = *found.begin();
    }
    if (!table || !entry) return false;
    for (uint64_t n = 0; n < std::min<uint64_t>(bound, 4096); ++n) {
      uint64_t target;
      if (entry == 4) {
        auto offset = image_.u32(table + 4 * n);
        if (!offset) break;
        target = table + uint64_t(int64_t(int32_t(*offset)));
      } else {
        auto address = image_.pointer(table + 8 * n);
        if (!address) break;
        target = *address;
      }
      if (!inside(target)) break;
      jump.targets.push_back(target);
    }
    return !jump.targets.empty();
  }

  Elf* elf_;
  const Image& image_;
  const std::vector<Symbol>& functions_;
  const CounterArrays& arrays_;
  std::set<std::string> noreturn_;
  std::vector<symbolize::LineRow> rows_;
  symbolize::FileNames files_;
  csh cs_ = 0;
};

// gcc's counters: each function's `__gcov_.<fn>` record (struct gcov_fn_info) names its
// object's gcov_info (whose filename names the .gcda), the function's ident, and its counters'
// number and address.
CounterArrays GccCounters(const Image& image, const std::vector<Symbol>& records,
                          const std::function<std::string(const std::string&)>& gcda_file,
                          std::map<std::string, ArcCounters>& gcdas) {
  CounterArrays arrays;
  for (const Symbol& info : records) {
    auto key = image.pointer(info.start);
    auto ident = image.u32(info.start + 8);
    auto number = image.u32(info.start + 24);
    auto values = image.pointer(info.start + 32);
    auto filename = key ? image.pointer(*key + 24) : std::nullopt;
    if (!ident || !number || !values || !filename) continue;
    std::string gcda = image.cstring(*filename);
    auto [it, added] = gcdas.try_emplace(gcda);
    if (added) {
      std::string path = gcda_file(gcda);
      if (!path.empty())
        if (Expected<ArcCounters> read = ReadGcda(path); read.ok()) it->second = std::move(*read);
    }
    auto counters = it->second.find(*ident);
    if (counters == it->second.end() || counters->second.size() != *number) continue;
    arrays.by_start[*values] = {*values, &counters->second};
  }
  return arrays;
}

// The counting itself, once the run's counters are placed in the binary.
Expected<InstructionCounts> Count(Elf* elf, Dwarf* dwarf, const Image& image,
                                  std::vector<Symbol> functions, const CounterArrays& arrays) {
  std::sort(functions.begin(), functions.end(),
            [](const Symbol& a, const Symbol& b) { return a.start < b.start; });
  functions.erase(std::unique(functions.begin(), functions.end(),
                              [](const Symbol& a, const Symbol& b) { return a.start == b.start; }),
                  functions.end());
  std::set<std::string> noreturn;
  Dwarf_Off offset = 0, next;
  size_t header;
  while (dwarf_nextcu(dwarf, offset, &next, &header, nullptr, nullptr, nullptr) == 0) {
    Dwarf_Die cu;
    if (dwarf_offdie(dwarf, offset + header, &cu)) NoReturnFromDwarf(&cu, noreturn);
    offset = next;
  }

  // A function and the `.cold` part gcc moved its unlikely code to are one flow graph.
  std::map<std::string, std::vector<const Symbol*>> parts;
  std::vector<std::string> order;
  for (const Symbol& s : functions) {
    std::string base = s.name;
    if (size_t cold = base.find(".cold"); cold != std::string::npos) base.resize(cold);
    auto [it, added] = parts.try_emplace(base);
    if (added) order.push_back(base);
    if (base == s.name)
      it->second.insert(it->second.begin(), &s);
    else
      it->second.push_back(&s);
  }
  InstructionCounts out;
  LineMap lines;
  Counter counter(elf, dwarf, image, functions, arrays, std::move(noreturn));
  std::vector<Counter::Function> built;
  for (const std::string& name : order) {
    const std::vector<const Symbol*>& p = parts[name];
    if (p.front()->name != name) continue;  // a `.cold` part alone
    Counter::Function f;
    switch (counter.build(p, f)) {
      case Counter::Built::kCounted:
        built.push_back(std::move(f));
        break;
      case Counter::Built::kNotFollowed:
        out.not_counted.push_back(symbolize::demangle(name.c_str()));
        break;
      case Counter::Built::kNoCounters:
        break;
    }
  }
  counter.solve(built, out, lines);
  for (auto& [key, line] : lines) out.lines.push_back(std::move(line));
  return out;
}

// The program's symbols: its functions, and the records of `prefix` (gcc's `__gcov_.`).
std::vector<Symbol> Symbols(Elf* elf, std::vector<Symbol>* records, const char* prefix) {
  std::vector<Symbol> functions;
  size_t length = std::strlen(prefix);
  symbolize::ForEachSymbol(elf, [&](const GElf_Sym& sym, const char* name) {
    if (GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_size)
      functions.push_back(Symbol{sym.st_value, sym.st_size, name});
    if (records && std::strncmp(name, prefix, length) == 0)
      records->push_back(Symbol{sym.st_value, sym.st_size, name});
  });
  return functions;
}

}  // namespace

Expected<InstructionCounts> CountInstructions(
    const std::string& binary, const std::function<std::string(const std::string&)>& gcda_file) {
  Expected<std::unique_ptr<symbolize::DebugBinary>> opened =
      symbolize::OpenDebugBinary(binary, "counted");
  if (!opened) return opened.status();
  Image image((*opened)->elf);
  std::vector<Symbol> records;
  std::vector<Symbol> functions = Symbols((*opened)->elf, &records, "__gcov_.");
  std::map<std::string, ArcCounters> gcdas;
  CounterArrays arrays = GccCounters(image, records, gcda_file, gcdas);
  if (arrays.by_start.empty())
    return Status::Error(binary + ": no counters of this run match the binary's");
  return Count((*opened)->elf, (*opened)->dwarf, image, std::move(functions), arrays);
}

Expected<InstructionCounts> CountInstructionsClang(const std::string& binary,
                                                   const std::vector<std::string>& profraws) {
  Expected<std::unique_ptr<symbolize::DebugBinary>> opened =
      symbolize::OpenDebugBinary(binary, "counted");
  if (!opened) return opened.status();
  Image image((*opened)->elf);
  std::optional<std::pair<uint64_t, uint64_t>> section = image.section("__llvm_prf_cnts");
  if (!section) return Status::Error(binary + ": no clang counters (__llvm_prf_cnts)");
  // Every process's counters of this binary, added up.
  std::vector<uint64_t> values(section->second / 8, 0);
  bool found = false;
  for (const std::string& path : profraws) {
    Expected<std::vector<uint64_t>> read = ReadProfrawCounters(path);
    if (!read.ok() || read->size() != values.size()) continue;
    for (size_t i = 0; i < values.size(); ++i) values[i] += (*read)[i];
    found = true;
  }
  if (!found) return Status::Error(binary + ": no counters of this run match the binary's");
  CounterArrays arrays;
  arrays.by_start[section->first] = {section->first, &values};
  return Count((*opened)->elf, (*opened)->dwarf, image, Symbols((*opened)->elf, nullptr, ""),
               arrays);
}

}  // namespace hotline::coverage

#include "runtime/debug_frame.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "runtime/dwarf_bytes.h"

namespace hotline::rt {
namespace {

// DWARF register numbers of x86-64 (psABI figure 3.36).
constexpr uint32_t kDwarfRbp = 6, kDwarfRsp = 7;

// How a register of the caller is found. Only rbp and the return address are tracked: a CFA
// rule based on any other register cannot be followed, since the walk does not know its value.
enum RuleKind : uint8_t { kSame, kUndefined, kAtCfa, kUnknown };

struct Rule {
  RuleKind kind = kUnknown;
  int32_t offset = 0;  // kAtCfa: the value is saved at CFA + offset
};

struct State {
  uint32_t cfa_reg = 0;
  int64_t cfa_offset = 0;
  bool cfa_known = false;
  Rule rbp{kSame, 0}, ra;
};

// One row of the unwind table: for pc in [start, end), CFA = (rsp or rbp) + cfa_offset.
struct Row {
  uint64_t start, end;
  int32_t cfa_offset, ra_offset, rbp_offset;
  uint8_t cfa_reg;  // kDwarfRsp, kDwarfRbp, or 0 when the CFA cannot be computed
  RuleKind ra, rbp;
};

struct Table {
  uint64_t low = 0, high = 0;  // the pcs the rows cover
  const Row* rows = nullptr;
  uint64_t count = 0;
  std::atomic<bool> live{false};
};

// constinit: the runtime's constructor fills these before dynamic initialisers of this file
// would run, and one would wipe them.
constexpr int kMaxTables = 256;
constinit Table g_tables[kMaxTables];
constinit std::atomic<int> g_table_count{0};
constinit std::atomic<uint64_t> g_entry_low{0}, g_entry_high{0};

struct Cie {
  uint64_t code_align = 1;
  int64_t data_align = 1;
  uint64_t ra_column = 16;
  uint64_t insns = 0, insns_end = 0;  // addresses in the mapped section
};

// A growing array of rows in anonymous memory (the runtime stays off the program's malloc).
struct RowBuffer {
  Row* rows = nullptr;
  uint64_t count = 0, capacity = 0;

  bool push(const Row& row) {
    if (count == capacity) {
      uint64_t grown = capacity ? capacity * 2 : 1024;
      void* p = rows ? mremap(rows, capacity * sizeof(Row), grown * sizeof(Row), MREMAP_MAYMOVE)
                     : mmap(nullptr, grown * sizeof(Row), PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) return false;
      rows = static_cast<Row*>(p);
      capacity = grown;
    }
    rows[count++] = row;
    return true;
  }
  void release() {
    if (rows) munmap(rows, capacity * sizeof(Row));
    rows = nullptr;
    count = capacity = 0;
  }
};

// Parses the CIE at `offset` of .debug_frame (versions 1, 3 and 4, 32-bit DWARF, augmentation
// "" only: nothing else is emitted into .debug_frame by the compilers we know).
bool ParseCie(const uint8_t* section, uint64_t section_size, uint64_t offset, Cie* cie) {
  if (offset >= section_size) return false;
  DwarfBytes r{AddressOf(section + offset), AddressOf(section + section_size)};
  uint64_t length = r.fixed(4);
  if (length == 0 || length >= 0xfffffff0 || !r.has(length)) return false;
  r.end = r.p + length;
  if (r.fixed(4) != 0xffffffff) return false;
  uint64_t version = r.fixed(1);
  if (version != 1 && version != 3 && version != 4) return false;
  if (!r.has(1) || r.peek() != 0) return false;  // augmentation string
  r.skip(1);
  if (version == 4 && (r.fixed(1) != 8 || r.fixed(1) != 0)) return false;  // address, segment
  cie->code_align = r.uleb();
  cie->data_align = r.sleb();
  cie->ra_column = version == 1 ? r.fixed(1) : r.uleb();
  cie->insns = r.p;
  cie->insns_end = r.end;
  return r.ok;
}

Rule* Tracked(State* s, const Cie& cie, uint64_t reg) {
  if (reg == kDwarfRbp) return &s->rbp;
  if (reg == cie.ra_column) return &s->ra;
  return nullptr;
}

void RestoreRule(State* s, const State& initial, const Cie& cie, uint64_t reg) {
  if (reg == kDwarfRbp) s->rbp = initial.rbp;
  if (reg == cie.ra_column) s->ra = initial.ra;
}

void SetRule(State* s, const Cie& cie, uint64_t reg, RuleKind kind, int64_t offset = 0) {
  if (Rule* rule = Tracked(s, cie, reg)) {
    bool fits = offset >= INT32_MIN && offset <= INT32_MAX;
    *rule = Rule{fits ? kind : kUnknown, int32_t(offset)};
  }
}

Row MakeRow(uint64_t start, uint64_t end, const State& s) {
  return Row{start,       end,          int32_t(s.cfa_offset),
             s.ra.offset, s.rbp.offset, uint8_t(s.cfa_known ? s.cfa_reg : 0),
             s.ra.kind,   s.rbp.kind};
}

enum class Run { kDone, kStopped, kNoMemory };

// Runs the CFA instructions of a CIE (rows == nullptr) or an FDE, emitting a row for each
// address range with its rules. Stops at the first instruction it does not know (or a damaged
// one), keeping the rows before it.
Run Execute(DwarfBytes r, const Cie& cie, uint64_t bias, const State& initial, State* state,
            uint64_t* loc, uint64_t end, RowBuffer* rows) {
  constexpr int kStackDepth = 16;
  State stack[kStackDepth];
  int depth = 0;
  auto advance = [&](uint64_t next) {
    if (!rows || next <= *loc) return true;
    uint64_t stop = std::min(next, end);
    if (stop > *loc && !rows->push(MakeRow(*loc, stop, *state))) return false;
    *loc = next;
    return true;
  };
  auto set_cfa = [&](uint64_t reg, int64_t offset) {
    state->cfa_reg = uint32_t(reg);
    state->cfa_offset = offset;
    state->cfa_known =
        (reg == kDwarfRsp || reg == kDwarfRbp) && offset >= INT32_MIN && offset <= INT32_MAX;
  };
  int64_t daf = cie.data_align;
  uint64_t caf = cie.code_align;
  while (r.ok && r.p < r.end) {
    uint8_t op = uint8_t(r.fixed(1));
    uint8_t low = op & 0x3f;
    switch (op >> 6) {
      case 1:  // DW_CFA_advance_loc
        if (!advance(*loc + low * caf)) return Run::kNoMemory;
        continue;
      case 2:  // DW_CFA_offset
        SetRule(state, cie, low, kAtCfa, int64_t(r.uleb()) * daf);
        continue;
      case 3:  // DW_CFA_restore
        RestoreRule(state, initial, cie, low);
        continue;
      default:
        break;
    }
    switch (op) {
      case 0x00:  // DW_CFA_nop
        break;
      case 0x01:  // DW_CFA_set_loc: a link-time address
        if (!advance(r.fixed(8) + bias)) return Run::kNoMemory;
        break;
      case 0x02:  // DW_CFA_advance_loc1
        if (!advance(*loc + r.fixed(1) * caf)) return Run::kNoMemory;
        break;
      case 0x03:  // DW_CFA_advance_loc2
        if (!advance(*loc + r.fixed(2) * caf)) return Run::kNoMemory;
        break;
      case 0x04:  // DW_CFA_advance_loc4
        if (!advance(*loc + r.fixed(4) * caf)) return Run::kNoMemory;
        break;
      case 0x05: {  // DW_CFA_offset_extended
        uint64_t reg = r.uleb();
        SetRule(state, cie, reg, kAtCfa, int64_t(r.uleb()) * daf);
        break;
      }
      case 0x06:  // DW_CFA_restore_extended
        RestoreRule(state, initial, cie, r.uleb());
        break;
      case 0x07:  // DW_CFA_undefined
        SetRule(state, cie, r.uleb(), kUndefined);
        break;
      case 0x08:  // DW_CFA_same_value
        SetRule(state, cie, r.uleb(), kSame);
        break;
      case 0x09:  // DW_CFA_register: the value lives in a register the walk does not track
        SetRule(state, cie, r.uleb(), kUnknown);
        r.uleb();
        break;
      case 0x0a:  // DW_CFA_remember_state
        if (depth == kStackDepth) return Run::kStopped;
        stack[depth++] = *state;
        break;
      case 0x0b:  // DW_CFA_restore_state
        if (depth == 0) return Run::kStopped;
        *state = stack[--depth];
        break;
      case 0x0c: {  // DW_CFA_def_cfa
        uint64_t reg = r.uleb();
        set_cfa(reg, int64_t(r.uleb()));
        break;
      }
      case 0x0d:  // DW_CFA_def_cfa_register
        set_cfa(r.uleb(), state->cfa_offset);
        break;
      case 0x0e:  // DW_CFA_def_cfa_offset
        set_cfa(state->cfa_reg, int64_t(r.uleb()));
        break;
      case 0x0f:  // DW_CFA_def_cfa_expression
        state->cfa_known = false;
        r.skip(r.uleb());
        break;
      case 0x10:    // DW_CFA_expression
      case 0x16: {  // DW_CFA_val_expression
        SetRule(state, cie, r.uleb(), kUnknown);
        r.skip(r.uleb());
        break;
      }
      case 0x11: {  // DW_CFA_offset_extended_sf
        uint64_t reg = r.uleb();
        SetRule(state, cie, reg, kAtCfa, r.sleb() * daf);
        break;
      }
      case 0x12: {  // DW_CFA_def_cfa_sf
        uint64_t reg = r.uleb();
        set_cfa(reg, r.sleb() * daf);
        break;
      }
      case 0x13:  // DW_CFA_def_cfa_offset_sf
        set_cfa(state->cfa_reg, r.sleb() * daf);
        break;
      case 0x14:  // DW_CFA_val_offset
      case 0x15:  // DW_CFA_val_offset_sf
        SetRule(state, cie, r.uleb(), kUnknown);
        if (op == 0x14)
          r.uleb();
        else
          r.sleb();
        break;
      case 0x2e:  // DW_CFA_GNU_args_size
        r.uleb();
        break;
      case 0x2f: {  // DW_CFA_GNU_negative_offset_extended
        uint64_t reg = r.uleb();
        SetRule(state, cie, reg, kAtCfa, -int64_t(r.uleb()) * daf);
        break;
      }
      default:
        return Run::kStopped;
    }
  }
  return r.ok ? Run::kDone : Run::kStopped;
}

bool CoveredByEhFrame(uint64_t pc) {
  unw_proc_info_t pi;
  return unw_get_proc_info_by_ip(unw_local_addr_space, pc, &pi, nullptr) == 0 &&
         pi.start_ip <= pc && pc < pi.end_ip;
}

// Walks every FDE of the section. Returns false when memory ran out.
bool DecodeSection(const uint8_t* section, uint64_t size, uint64_t bias, uint64_t start,
                   uint64_t module_size, RowBuffer* rows) {
  uint64_t entry = getauxval(AT_ENTRY);
  uint64_t offset = 0;
  while (offset + 4 <= size) {
    DwarfBytes r{AddressOf(section + offset), AddressOf(section + size)};
    uint64_t length = r.fixed(4);
    // fpc separates its units' entries with zero terminators; skip them and go on.
    if (length == 0) {
      offset += 4;
      continue;
    }
    if (length >= 0xfffffff0 || !r.has(length)) break;  // 64-bit DWARF or damaged
    uint64_t next = offset + 4 + length;
    r.end = r.p + length;
    uint64_t cie_offset = r.fixed(4);
    offset = next;
    if (cie_offset == 0xffffffff) continue;  // a CIE
    Cie cie;
    if (!ParseCie(section, size, cie_offset, &cie)) continue;
    auto inside = [&](uint64_t pc, uint64_t range) {
      return range != 0 && pc >= start && pc - start < module_size &&
             range <= module_size - (pc - start);
    };
    DwarfBytes wide = r;
    uint64_t pc = r.fixed(8) + bias;
    uint64_t range = r.fixed(8);
    // fpc 3.2 writes the CIE pointer as 8 bytes although the entry is 32-bit DWARF; read that
    // way, its address lies in the module where the standard reading does not.
    if (r.ok && !inside(pc, range) && wide.fixed(4) == 0) {
      uint64_t wide_pc = wide.fixed(8) + bias;
      uint64_t wide_range = wide.fixed(8);
      if (wide.ok && inside(wide_pc, wide_range)) r = wide, pc = wide_pc, range = wide_range;
    }
    // Discarded sections keep their FDEs with address 0: outside the module, skip them.
    if (!r.ok || !inside(pc, range)) continue;
    if (CoveredByEhFrame(pc)) continue;
    if (pc <= entry && entry < pc + range) {
      g_entry_low.store(pc, std::memory_order_relaxed);
      g_entry_high.store(pc + range, std::memory_order_relaxed);
    }
    State initial;
    uint64_t loc = pc;
    if (Execute(DwarfBytes{cie.insns, cie.insns_end}, cie, bias, initial, &initial, &loc, pc,
                nullptr) != Run::kDone)
      continue;
    State state = initial;
    loc = pc;
    Run run = Execute(r, cie, bias, initial, &state, &loc, pc + range, rows);
    if (run == Run::kNoMemory) return false;
    // The last row runs to the end of the function, unless its rules were not understood.
    if (run == Run::kDone && loc < pc + range && !rows->push(MakeRow(loc, pc + range, state)))
      return false;
  }
  return true;
}

// Maps the file and finds .debug_frame. Returns the mapping (to unmap) or nullptr.
const uint8_t* MapDebugFrame(const char* path, uint64_t* map_size, const uint8_t** section,
                             uint64_t* section_size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st;
  void* map = MAP_FAILED;
  if (fstat(fd, &st) == 0 && st.st_size > 0)
    map = mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return nullptr;
  const auto* base = static_cast<const uint8_t*>(map);
  uint64_t size = uint64_t(st.st_size);
  *map_size = size;
  Elf64_Ehdr eh;
  if (size < sizeof eh) return base;
  std::memcpy(&eh, base, sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > size ||
      uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr) > size - eh.e_shoff || eh.e_shstrndx >= eh.e_shnum)
    return base;
  auto shdr = [&](int i) {
    Elf64_Shdr s;
    std::memcpy(&s, base + eh.e_shoff + uint64_t(i) * sizeof s, sizeof s);
    return s;
  };
  Elf64_Shdr names = shdr(eh.e_shstrndx);
  if (names.sh_offset > size || names.sh_size > size - names.sh_offset) return base;
  static constexpr char kName[] = ".debug_frame";
  for (int i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr s = shdr(i);
    if (s.sh_type != SHT_PROGBITS || (s.sh_flags & SHF_COMPRESSED)) continue;
    if (s.sh_name >= names.sh_size || names.sh_size - s.sh_name < sizeof kName) continue;
    if (std::memcmp(base + names.sh_offset + s.sh_name, kName, sizeof kName) != 0) continue;
    if (s.sh_offset > size || s.sh_size > size - s.sh_offset) return base;
    *section = base + s.sh_offset;
    *section_size = s.sh_size;
    return base;
  }
  return base;
}

const Row* FindRow(uint64_t pc) {
  int n = g_table_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    const Table& t = g_tables[i];
    if (pc < t.low || pc >= t.high || !t.live.load(std::memory_order_acquire)) continue;
    // The last row starting at or before pc.
    const Row* first = t.rows;
    uint64_t lo = 0, hi = t.count;
    while (lo < hi) {
      uint64_t mid = lo + (hi - lo) / 2;
      if (first[mid].start <= pc) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo > 0 && pc < first[lo - 1].end) return &first[lo - 1];
  }
  return nullptr;
}

}  // namespace

void AddDebugFrameModule(const char* path, uint64_t bias, uint64_t start, uint64_t size) {
  // A module that appears over the range of a retired one means the old code is gone.
  int n = g_table_count.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    Table& t = g_tables[i];
    if (t.low < start + size && start < t.high) t.live.store(false, std::memory_order_release);
  }
  uint64_t entry = getauxval(AT_ENTRY);
  bool holds_entry = entry >= start && entry - start < size;
  if (path[0] == '/') {
    uint64_t map_size = 0, section_size = 0;
    const uint8_t* section = nullptr;
    const uint8_t* map = MapDebugFrame(path, &map_size, &section, &section_size);
    if (map) {
      RowBuffer rows;
      if (section && DecodeSection(section, section_size, bias, start, size, &rows) &&
          rows.count > 0 && n < kMaxTables) {
        std::sort(rows.rows, rows.rows + rows.count,
                  [](const Row& a, const Row& b) { return a.start < b.start; });
        Table& t = g_tables[n];
        t.low = rows.rows[0].start;
        t.high = 0;
        for (uint64_t i = 0; i < rows.count; ++i) t.high = std::max(t.high, rows.rows[i].end);
        t.rows = rows.rows;
        t.count = rows.count;
        t.live.store(true, std::memory_order_relaxed);
        g_table_count.store(n + 1, std::memory_order_release);
      } else {
        rows.release();
      }
      munmap(const_cast<uint8_t*>(map), map_size);
    }
  }
  // Where .eh_frame describes _start, libunwind knows its extent.
  unw_proc_info_t pi;
  if (holds_entry && g_entry_high.load(std::memory_order_relaxed) == 0 &&
      unw_get_proc_info_by_ip(unw_local_addr_space, entry, &pi, nullptr) == 0 &&
      pi.start_ip <= entry && entry < pi.end_ip) {
    g_entry_low.store(pi.start_ip, std::memory_order_relaxed);
    g_entry_high.store(pi.end_ip, std::memory_order_relaxed);
  }
}

CfiStep StepDebugFrame(uint64_t lookup_pc, uint64_t* ip, uint64_t* sp, uint64_t* bp,
                       const StackWindow& window) {
  const Row* row = FindRow(lookup_pc);
  if (!row) return CfiStep::kNotCovered;
  if (row->ra == kUndefined) return CfiStep::kOutermost;
  if (row->cfa_reg == 0 || row->ra != kAtCfa) return CfiStep::kFailed;
  uint64_t cfa = (row->cfa_reg == kDwarfRsp ? *sp : *bp) + uint64_t(int64_t(row->cfa_offset));
  // The caller's frame lies above this one; anything else is a bad row or a bad register.
  if (cfa <= *sp) return CfiStep::kFailed;
  uint64_t ret = 0, saved_bp = *bp;
  if (!window.read(cfa + uint64_t(int64_t(row->ra_offset)), &ret)) return CfiStep::kFailed;
  if (row->rbp == kAtCfa && !window.read(cfa + uint64_t(int64_t(row->rbp_offset)), &saved_bp))
    return CfiStep::kFailed;
  if (row->rbp == kUndefined || row->rbp == kUnknown) saved_bp = 0;
  if (ret == 0) return CfiStep::kOutermost;
  *ip = ret;
  *sp = cfa;
  *bp = saved_bp;
  return CfiStep::kStepped;
}

bool InEntryFunction(uint64_t pc) {
  return pc >= g_entry_low.load(std::memory_order_relaxed) &&
         pc < g_entry_high.load(std::memory_order_relaxed);
}

}  // namespace hotline::rt

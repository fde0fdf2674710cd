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

#include "runtime/descriptors.h"
#include "unwind/cfi.h"
#include "unwind/dwarf_bytes.h"

namespace hotline::rt {
namespace {

using unwind::Cie;
using unwind::DwarfBytes;
using unwind::kDwarfRbp;
using unwind::kDwarfRsp;
using unwind::Rule;
using unwind::State;

// One row of the unwind table: for pc in [start, end), CFA = (rsp or rbp) + cfa_offset.
struct Row {
  uint64_t start, end;
  int32_t cfa_offset, ra_offset, rbp_offset;
  uint8_t cfa_reg;  // kDwarfRsp, kDwarfRbp, or 0 when the CFA cannot be computed
  Rule::Kind ra, rbp;
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
  DwarfBytes r{unwind::AddressOf(section + offset), unwind::AddressOf(section + section_size)};
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
  cie->set_loc = true;
  return r.ok;
}

Row MakeRow(uint64_t start, uint64_t end, const State& s) {
  return Row{start,       end,          int32_t(s.cfa_offset),
             s.ra.offset, s.rbp.offset, uint8_t(s.cfa_known ? s.cfa_reg : 0),
             s.ra.kind,   s.rbp.kind};
}

// Runs an FDE's instructions from `initial` (the CIE's rules), pushing a row for each address
// range of [pc, end). False when memory ran out; rows after an instruction not understood are
// left out.
bool PushRows(DwarfBytes r, const Cie& cie, uint64_t bias, const State& initial, uint64_t pc,
              uint64_t end, RowBuffer* rows) {
  State state = initial;
  uint64_t loc = pc;
  bool memory = true;
  unwind::Run run = unwind::Execute(r, cie, bias, initial, &state, &loc, [&](uint64_t next) {
    if (next <= loc) return true;
    uint64_t stop = std::min(next, end);
    if (stop > loc && !rows->push(MakeRow(loc, stop, state))) return memory = false;
    return true;
  });
  if (!memory) return false;
  // The last row runs to the end of the function, unless its rules were not understood.
  if (run == unwind::Run::kEnded && loc < end) return rows->push(MakeRow(loc, end, state));
  return true;
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
    DwarfBytes r{unwind::AddressOf(section + offset), unwind::AddressOf(section + size)};
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
    if (unwind::Execute(DwarfBytes{cie.insns, cie.insns_end}, cie, bias, initial, &initial, &loc,
                        [](uint64_t) { return true; }) != unwind::Run::kEnded)
      continue;
    if (!PushRows(r, cie, bias, initial, pc, pc + range, rows)) return false;
  }
  return true;
}

// Maps the file and finds .debug_frame. Returns the mapping (to unmap) or nullptr.
const uint8_t* MapDebugFrame(const char* path, uint64_t* map_size, const uint8_t** section,
                             uint64_t* section_size) {
  int fd = OpenOwned(path, O_RDONLY);
  if (fd < 0) return nullptr;
  struct stat st;
  void* map = MAP_FAILED;
  if (fstat(fd, &st) == 0 && st.st_size > 0)
    map = mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  CloseOwnDescriptor(fd);
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
  if (row->ra == Rule::kUndefined) return CfiStep::kOutermost;
  if (row->cfa_reg == 0 || row->ra != Rule::kAtCfa) return CfiStep::kFailed;
  uint64_t cfa = (row->cfa_reg == kDwarfRsp ? *sp : *bp) + uint64_t(int64_t(row->cfa_offset));
  // The caller's frame lies above this one; anything else is a bad row or a bad register.
  if (cfa <= *sp) return CfiStep::kFailed;
  uint64_t ret = 0, saved_bp = *bp;
  if (!window.read(cfa + uint64_t(int64_t(row->ra_offset)), &ret)) return CfiStep::kFailed;
  if (row->rbp == Rule::kAtCfa && !window.read(cfa + uint64_t(int64_t(row->rbp_offset)), &saved_bp))
    return CfiStep::kFailed;
  if (row->rbp == Rule::kUndefined || row->rbp == Rule::kUnknown) saved_bp = 0;
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

#include "runtime/stack_walk.h"

#include <elf.h>
#include <link.h>

#include <cstddef>
#include <cstring>

#include "runtime/dwarf_bytes.h"

namespace hotline::rt {
namespace {

enum RuleKind : uint8_t {
  kEmpty = 0,     // no rule cached in this slot
  kStep,          // CFA = reg + k, return address at CFA - 8, rbp unchanged
  kStepSavedRbp,  // the same, rbp saved at CFA + rbp_offset
  kOutermost,     // the return address is undefined: the stack ends here (_start, clone)
  kUnknown,       // anything else: libunwind's job
};

// The walker reads memory at addresses it computed (stack slots, unwind tables), each checked
// against the bounds of its mapping before it is read.
inline uint64_t LoadWord(uint64_t address) {
  uint64_t v;
  std::memcpy(&v, AtAddress(address), 8);
  return v;
}
inline uint8_t LoadByte(uint64_t address) {
  return *static_cast<const uint8_t*>(AtAddress(address));
}

// DWARF register numbers of x86-64 (psABI figure 3.36).
constexpr uint64_t kDwarfRbp = 6, kDwarfRsp = 7, kDwarfRa = 16;

// ---- Reading the loaded image's unwind tables, inside its readable loaded segments only. ----

constexpr int kMaxSegments = 16;

struct Module {
  uint64_t eh_frame_hdr = 0;
  int segments = 0;
  uint64_t seg_start[kMaxSegments], seg_end[kMaxSegments];
};

// The end of the loaded segment holding `address`, or 0.
uint64_t SegmentEnd(const Module& m, uint64_t address) {
  for (int i = 0; i < m.segments; ++i)
    if (address >= m.seg_start[i] && address < m.seg_end[i]) return m.seg_end[i];
  return 0;
}

using Bytes = DwarfBytes;

// A pointer in the DW_EH_PE encoding `enc`; `data_base` for datarel (the .eh_frame_hdr).
uint64_t ReadEncoded(Bytes& r, uint8_t enc, uint64_t data_base) {
  if (enc == 0xff) return 0;  // DW_EH_PE_omit
  uint64_t at = r.p, v = 0;
  switch (enc & 0x0f) {
    case 0x00:
      v = r.fixed(8);
      break;  // absptr
    case 0x01:
      v = r.uleb();
      break;  // uleb128
    case 0x02:
      v = r.fixed(2);
      break;  // udata2
    case 0x03:
      v = r.fixed(4);
      break;  // udata4
    case 0x04:
      v = r.fixed(8);
      break;  // udata8
    case 0x09:
      v = uint64_t(r.sleb());
      break;  // sleb128
    case 0x0a:
      v = uint64_t(r.signedFixed(2));
      break;  // sdata2
    case 0x0b:
      v = uint64_t(r.signedFixed(4));
      break;  // sdata4
    case 0x0c:
      v = r.fixed(8);
      break;  // sdata8
    default:
      r.ok = false;
      return 0;
  }
  switch (enc & 0x70) {
    case 0x00:
      break;  // absolute
    case 0x10:
      v += at;
      break;  // pcrel
    case 0x30:
      v += data_base;
      break;  // datarel
    default:
      r.ok = false;
      return 0;  // textrel, funcrel, aligned: not on x86-64 Linux
  }
  return v;  // DW_EH_PE_indirect (0x80) marks only personality pointers, which are skipped
}

// The FDE whose range holds `pc`, through the .eh_frame_hdr's sorted table (as libunwind
// finds it); 0 when there is none or the table is not the searchable kind.
uint64_t FindFde(const Module& m, uint64_t pc) {
  uint64_t hdr = m.eh_frame_hdr;
  Bytes r{hdr, SegmentEnd(m, hdr)};
  if (!hdr || r.fixed(1) != 1) return 0;
  uint8_t frame_enc = uint8_t(r.fixed(1)), count_enc = uint8_t(r.fixed(1));
  uint8_t table_enc = uint8_t(r.fixed(1));
  ReadEncoded(r, frame_enc, hdr);
  uint64_t count = ReadEncoded(r, count_enc, hdr);
  // datarel sdata4 pairs: the only layout that can be searched, and what every linker writes.
  if (!r.ok || table_enc != 0x3b || count == 0 || count > (r.end - r.p) / 8) return 0;
  uint64_t table = r.p;
  auto initial = [&](uint64_t i) {
    int32_t v;
    std::memcpy(&v, AtAddress(table + i * 8), 4);
    return hdr + uint64_t(int64_t(v));
  };
  if (pc < initial(0)) return 0;
  uint64_t lo = 0, hi = count;  // the last entry whose start is ≤ pc
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (initial(mid) <= pc) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  int32_t fde;
  std::memcpy(&fde, AtAddress(table + lo * 8 + 4), 4);
  return hdr + uint64_t(int64_t(fde));
}

struct Cie {
  uint64_t code_align = 1;
  int64_t data_align = 1;
  uint64_t ra_column = kDwarfRa;
  uint8_t fde_enc = 0;
  bool has_augmentation_data = false;
  bool signal_frame = false;
  uint64_t insns = 0, insns_end = 0;
};

bool ParseCie(const Module& m, uint64_t at, Cie* cie) {
  Bytes r{at, SegmentEnd(m, at)};
  uint64_t length = r.fixed(4);
  if (length == 0 || length >= 0xfffffff0 || !r.has(length)) return false;
  r.end = r.p + length;
  if (r.fixed(4) != 0) return false;  // a CIE's id in .eh_frame
  uint64_t version = r.fixed(1);
  if (version != 1 && version != 3) return false;
  char augmentation[8];
  int n = 0;
  for (;;) {
    char c = char(r.fixed(1));
    if (!r.ok || n == int(sizeof augmentation)) return false;
    augmentation[n++] = c;
    if (c == 0) break;
  }
  if (augmentation[0] != 0 && augmentation[0] != 'z') return false;
  cie->code_align = r.uleb();
  cie->data_align = r.sleb();
  cie->ra_column = version == 1 ? r.fixed(1) : r.uleb();
  if (augmentation[0] == 'z') {
    uint64_t size = r.uleb();
    uint64_t data_end = r.p + size;
    for (int i = 1; augmentation[i] && r.ok; ++i) {
      switch (augmentation[i]) {
        case 'R':
          cie->fde_enc = uint8_t(r.fixed(1));
          break;
        case 'P':
          ReadEncoded(r, uint8_t(r.fixed(1)), 0);
          break;
        case 'L':
          r.fixed(1);
          break;
        case 'S':
          cie->signal_frame = true;
          break;
        default:
          return false;
      }
    }
    if (!r.ok || r.p > data_end) return false;
    r.p = data_end;
    cie->has_augmentation_data = true;
  }
  cie->insns = r.p;
  cie->insns_end = r.end;
  return r.ok && r.p <= r.end;
}

// The rules of one row, as far as the walk needs them.
struct Row {
  uint64_t cfa_reg = kDwarfRsp;
  int64_t cfa_offset = 8;
  bool cfa_ok = true;
  enum Kind : uint8_t { kSame, kAtCfa, kUndefined, kOther } rbp = kSame, ra = kAtCfa;
  int64_t rbp_offset = 0, ra_offset = -8;
};

enum class Exec { kReached, kEnded, kFailed };

// Runs CFA instructions from `r` until the row that holds `target` (kReached) or the end of
// the instructions (kEnded: the last row holds it).
Exec Execute(Bytes r, const Cie& cie, const Row& initial, uint64_t target, uint64_t* loc,
             Row* row) {
  constexpr int kStates = 8;
  Row stack[kStates];
  int depth = 0;
  auto reg_rule = [&](uint64_t reg, Row::Kind kind, int64_t offset) {
    if (reg == kDwarfRbp) row->rbp = kind, row->rbp_offset = offset;
    if (reg == cie.ra_column) row->ra = kind, row->ra_offset = offset;
  };
  auto restore = [&](uint64_t reg) {
    if (reg == kDwarfRbp) row->rbp = initial.rbp, row->rbp_offset = initial.rbp_offset;
    if (reg == cie.ra_column) row->ra = initial.ra, row->ra_offset = initial.ra_offset;
  };
  auto advance = [&](uint64_t delta) {
    *loc += delta;
    return *loc > target;  // the row just ended holds target
  };
  int64_t daf = cie.data_align;
  uint64_t caf = cie.code_align;
  while (r.ok && r.p < r.end) {
    uint8_t op = uint8_t(r.fixed(1));
    uint8_t low = op & 0x3f;
    switch (op >> 6) {
      case 1:  // DW_CFA_advance_loc
        if (advance(low * caf)) return Exec::kReached;
        continue;
      case 2:  // DW_CFA_offset
        reg_rule(low, Row::kAtCfa, int64_t(r.uleb()) * daf);
        continue;
      case 3:  // DW_CFA_restore
        restore(low);
        continue;
      default:
        break;
    }
    switch (op) {
      case 0x00:  // DW_CFA_nop
        break;
      case 0x02:  // DW_CFA_advance_loc1
        if (advance(r.fixed(1) * caf)) return Exec::kReached;
        break;
      case 0x03:  // DW_CFA_advance_loc2
        if (advance(r.fixed(2) * caf)) return Exec::kReached;
        break;
      case 0x04:  // DW_CFA_advance_loc4
        if (advance(r.fixed(4) * caf)) return Exec::kReached;
        break;
      case 0x05: {  // DW_CFA_offset_extended
        uint64_t reg = r.uleb();
        reg_rule(reg, Row::kAtCfa, int64_t(r.uleb()) * daf);
        break;
      }
      case 0x06:  // DW_CFA_restore_extended
        restore(r.uleb());
        break;
      case 0x07:  // DW_CFA_undefined
        reg_rule(r.uleb(), Row::kUndefined, 0);
        break;
      case 0x08:  // DW_CFA_same_value
        reg_rule(r.uleb(), Row::kSame, 0);
        break;
      case 0x09: {  // DW_CFA_register
        uint64_t reg = r.uleb();
        r.uleb();
        reg_rule(reg, Row::kOther, 0);
        break;
      }
      case 0x0a:  // DW_CFA_remember_state
        if (depth == kStates) return Exec::kFailed;
        stack[depth++] = *row;
        break;
      case 0x0b:  // DW_CFA_restore_state: the CFA too, as GCC's epilogues expect
        if (depth == 0) return Exec::kFailed;
        *row = stack[--depth];
        break;
      case 0x0c:  // DW_CFA_def_cfa
        row->cfa_reg = r.uleb();
        row->cfa_offset = int64_t(r.uleb());
        row->cfa_ok = true;
        break;
      case 0x0d:  // DW_CFA_def_cfa_register
        row->cfa_reg = r.uleb();
        break;
      case 0x0e:  // DW_CFA_def_cfa_offset
        row->cfa_offset = int64_t(r.uleb());
        break;
      case 0x0f:  // DW_CFA_def_cfa_expression
        row->cfa_ok = false;
        r.p += r.uleb();
        break;
      case 0x10:    // DW_CFA_expression
      case 0x16: {  // DW_CFA_val_expression
        uint64_t reg = r.uleb();
        r.p += r.uleb();
        reg_rule(reg, Row::kOther, 0);
        break;
      }
      case 0x11: {  // DW_CFA_offset_extended_sf
        uint64_t reg = r.uleb();
        reg_rule(reg, Row::kAtCfa, r.sleb() * daf);
        break;
      }
      case 0x12:  // DW_CFA_def_cfa_sf
        row->cfa_reg = r.uleb();
        row->cfa_offset = r.sleb() * daf;
        row->cfa_ok = true;
        break;
      case 0x13:  // DW_CFA_def_cfa_offset_sf
        row->cfa_offset = r.sleb() * daf;
        break;
      case 0x14:    // DW_CFA_val_offset
      case 0x15: {  // DW_CFA_val_offset_sf
        uint64_t reg = r.uleb();
        if (op == 0x14) {
          r.uleb();
        } else {
          r.sleb();
        }
        reg_rule(reg, Row::kOther, 0);
        break;
      }
      case 0x2e:  // DW_CFA_GNU_args_size: no bearing on the registers
        r.uleb();
        break;
      case 0x2f: {  // DW_CFA_GNU_negative_offset_extended
        uint64_t reg = r.uleb();
        reg_rule(reg, Row::kAtCfa, -int64_t(r.uleb()) * daf);
        break;
      }
      default:  // DW_CFA_set_loc and what no x86-64 compiler emits
        return Exec::kFailed;
    }
  }
  return r.ok ? Exec::kEnded : Exec::kFailed;
}

// The rule for the frame whose lookup address is `pc` (a return address - 1), from the
// .eh_frame of module `m`.
UnwindRule RuleIn(const Module& m, uint64_t pc) {
  UnwindRule rule;
  rule.pc = pc;
  rule.kind = kUnknown;
  uint64_t fde = FindFde(m, pc);
  if (!fde) return rule;
  Bytes r{fde, SegmentEnd(m, fde)};
  uint64_t length = r.fixed(4);
  if (length == 0 || length >= 0xfffffff0 || !r.has(length)) return rule;
  r.end = r.p + length;
  uint64_t cie_field = r.p;
  uint64_t cie_pointer = r.fixed(4);
  if (!r.ok || cie_pointer == 0 || cie_pointer > cie_field) return rule;
  Cie cie;
  if (!ParseCie(m, cie_field - cie_pointer, &cie) || cie.signal_frame) return rule;
  uint64_t start = ReadEncoded(r, cie.fde_enc, 0);
  uint64_t range = ReadEncoded(r, uint8_t(cie.fde_enc & 0x0f), 0);
  if (!r.ok || pc < start || pc - start >= range) return rule;
  if (cie.has_augmentation_data) r.p += r.uleb();
  if (!r.ok || r.p > r.end) return rule;
  Row initial;
  uint64_t loc = start;
  Exec e = Execute(Bytes{cie.insns, cie.insns_end}, cie, initial, ~uint64_t(0), &loc, &initial);
  if (e == Exec::kFailed) return rule;
  Row row = initial;
  loc = start;
  if (Execute(r, cie, initial, pc, &loc, &row) == Exec::kFailed) return rule;
  if (row.ra == Row::kUndefined) {
    rule.kind = kOutermost;
    return rule;
  }
  if (!row.cfa_ok || (row.cfa_reg != kDwarfRsp && row.cfa_reg != kDwarfRbp) ||
      row.cfa_offset < INT32_MIN || row.cfa_offset > INT32_MAX || row.ra != Row::kAtCfa ||
      row.ra_offset != -8)
    return rule;
  rule.cfa_offset = int32_t(row.cfa_offset);
  rule.cfa_from_rbp = row.cfa_reg == kDwarfRbp;
  if (row.rbp == Row::kSame) {
    rule.kind = kStep;
  } else if (row.rbp == Row::kAtCfa && row.rbp_offset >= INT16_MIN && row.rbp_offset <= INT16_MAX) {
    rule.kind = kStepSavedRbp;
    rule.rbp_offset = int16_t(row.rbp_offset);
  }
  return rule;
}

struct FindModule {
  uint64_t pc;
  UnwindRule rule;
};

int OnModule(dl_phdr_info* info, size_t, void* data) {
  auto* find = static_cast<FindModule*>(data);
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uint64_t start = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && find->pc >= start && find->pc - start < ph.p_memsz) holds = true;
  }
  if (!holds) return 0;
  Module m;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uint64_t start = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_GNU_EH_FRAME) m.eh_frame_hdr = start;
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_R) && m.segments < kMaxSegments) {
      m.seg_start[m.segments] = start;
      m.seg_end[m.segments] = start + ph.p_memsz;
      ++m.segments;
    }
  }
  // Decoded here, with the loader's lock held: the module cannot be unloaded meanwhile.
  find->rule = RuleIn(m, find->pc);
  return 1;
}

UnwindRule DecodeRule(uint64_t pc) {
  FindModule find{pc, UnwindRule{pc, 0, 0, kUnknown, 0}};
  dl_iterate_phdr(OnModule, &find);
  return find.rule;
}

const UnwindRule& RuleFor(StackWalker* w, uint64_t pc) {
  UnwindRule& slot = w->rules[(pc * 0x9E3779B97F4A7C15ull) >> 51];
  static_assert(StackWalker::kRuleSlots == 1 << 13);
  if (slot.pc != pc || slot.kind == kEmpty) slot = DecodeRule(pc);
  return slot;
}

int ReadLoaderCounters(dl_phdr_info* info, size_t size, void* data) {
  auto* w = static_cast<StackWalker*>(data);
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs &&
      (info->dlpi_adds != w->loader_adds || info->dlpi_subs != w->loader_subs)) {
    bool first = w->loader_adds == 0 && w->loader_subs == 0;
    w->loader_adds = info->dlpi_adds;
    w->loader_subs = info->dlpi_subs;
    if (!first) ResetWalker(w, false);
  }
  return 1;  // the counters are the same in every entry
}

// Whether the words the previous walk read from its frame `k` outwards still hold what it read.
bool OuterFramesUnchanged(const StackWalker* w, int k) {
  for (int i = 0; i <= k; ++i) {
    const WalkedFrame& f = w->frames[i];
    if (f.ra_slot && LoadWord(f.ra_slot) != f.ra_value) return false;
    if (f.bp_slot && LoadWord(f.bp_slot) != f.bp_value) return false;
  }
  return true;
}

}  // namespace

uint64_t HashStack(const uint64_t* frames, int depth) {
  uint64_t h = kStackHashSeed;
  for (int i = depth; i-- > 0;) h = HashStackStep(h, frames[i]);
  return h | 1;
}

void ResetWalker(StackWalker* walker, bool keep_rules) {
  if (!keep_rules)
    for (UnwindRule& rule : walker->rules) rule = UnwindRule{};
  walker->depth = 0;
  walker->reusable = false;
}

int WalkStack(StackWalker* w, uint64_t pc, uint64_t sp, uint64_t bp, uint64_t low, uint64_t high,
              uint64_t* hash) {
  // Unwind rules of unloaded code must not outlive it: every 256 stacks (and at the first) the
  // loader's counters are read, and the rules dropped when a module came or went.
  if ((w->walks++ & 255) == 0) dl_iterate_phdr(ReadLoaderCounters, w);
  if (low >= high || sp < low || sp >= high) return -1;
  // The new innermost frames, innermost first, until the walk meets the previous one. Every word
  // read lies between the reading frame's stack pointer and the top of the stack.
  WalkedFrame* fresh = w->fresh;
  int n = 0;
  int k = w->reusable ? w->depth - 1 : -1;  // the previous walk's frame to compare with
  bool cut = false;
  for (;;) {
    while (k >= 0 && w->frames[k].sp < sp) --k;
    if (k >= 0 && w->frames[k].sp == sp && w->frames[k].pc == pc && w->frames[k].bp == bp &&
        OuterFramesUnchanged(w, k)) {
      if (k + 1 + n <= kMaxWalkFrames) {
        w->reused_frames += uint64_t(k + 1);
        break;
      }
      k = -1;  // the same outer frames, but the stack is cut below them now: walk on
    }
    if (n == kMaxWalkFrames) {
      k = -1;
      cut = true;
      break;
    }
    WalkedFrame& f = fresh[n++];
    f = WalkedFrame{pc, sp, bp, 0, 0, 0, 0, 0};
    const UnwindRule& rule = RuleFor(w, pc - 1);
    if (rule.kind == kOutermost) {
      k = -1;
      break;
    }
    if (rule.kind != kStep && rule.kind != kStepSavedRbp) return -1;
    uint64_t cfa = (rule.cfa_from_rbp ? bp : sp) + uint64_t(int64_t(rule.cfa_offset));
    uint64_t ra_slot = cfa - 8;
    if (cfa <= sp || cfa > high || ra_slot < sp || ra_slot > high - 8) return -1;
    uint64_t ra = LoadWord(ra_slot);
    f.ra_slot = ra_slot, f.ra_value = ra;
    uint64_t next_bp = bp;
    if (rule.kind == kStepSavedRbp) {
      uint64_t bp_slot = cfa + uint64_t(int64_t(rule.rbp_offset));
      if (bp_slot < sp || bp_slot > high - 8) return -1;
      next_bp = LoadWord(bp_slot);
      f.bp_slot = bp_slot, f.bp_value = next_bp;
    }
    // libunwind's fast trace ends a stack at a return address this low (0 above all).
    if (ra < 0x4000) {
      k = -1;
      break;
    }
    pc = ra, sp = cfa, bp = next_bp;
  }
  // The new stack: the previous walk's frames 0..k, then the fresh ones, outermost first.
  int depth = k + 1;
  uint64_t h = depth > 0 ? w->frames[k].hash : kStackHashSeed;
  for (int i = n; i-- > 0;) {
    WalkedFrame& f = w->frames[depth++];
    f = fresh[i];
    h = HashStackStep(h, f.pc);
    f.hash = h;
  }
  w->depth = depth;
  w->reusable = !cut;
  *hash = h | 1;
  return depth;
}

}  // namespace hotline::rt

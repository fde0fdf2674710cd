#include "unwind/eh_frame.h"

#include <cstring>

#include "unwind/cfi.h"
#include "unwind/dwarf_bytes.h"

namespace hotline::unwind {
namespace {

// A pointer in the DW_EH_PE encoding `enc`; `data_base` for datarel (the .eh_frame_hdr).
uint64_t ReadEncoded(DwarfBytes& r, uint8_t enc, uint64_t data_base) {
  if (enc == 0xff) return 0;  // DW_EH_PE_omit
  uint64_t at = r.p, v = 0;
  switch (enc & 0x0f) {
    case 0x00:  // absptr
    case 0x04:  // udata8
    case 0x0c:  // sdata8
      v = r.fixed(8);
      break;
    case 0x01:  // uleb128
      v = r.uleb();
      break;
    case 0x02:  // udata2
      v = r.fixed(2);
      break;
    case 0x03:  // udata4
      v = r.fixed(4);
      break;
    case 0x09:  // sleb128
      v = uint64_t(r.sleb());
      break;
    case 0x0a:  // sdata2
      v = uint64_t(r.signedFixed(2));
      break;
    case 0x0b:  // sdata4
      v = uint64_t(r.signedFixed(4));
      break;
    default:
      r.ok = false;
      return 0;
  }
  switch (enc & 0x70) {
    case 0x00:  // absolute
      break;
    case 0x10:  // pcrel
      v += at;
      break;
    case 0x30:  // datarel
      v += data_base;
      break;
    default:  // textrel, funcrel, aligned: not on x86-64 Linux
      r.ok = false;
      return 0;
  }
  return v;  // DW_EH_PE_indirect (0x80) marks only personality pointers, which are skipped
}

// The FDE whose range may hold `pc`, through the .eh_frame_hdr's sorted table; 0 when there is
// none or the table is not the searchable kind.
uint64_t FindFde(const ImageInMemory& m, uint64_t pc) {
  uint64_t hdr = m.eh_frame_hdr;
  DwarfBytes r{hdr, m.segmentEnd(hdr)};
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

// The CIE at `at` of .eh_frame (versions 1 and 3, augmentations of z, R, P, L, S).
bool ParseCie(const ImageInMemory& m, uint64_t at, Cie* cie) {
  DwarfBytes r{at, m.segmentEnd(at)};
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

}  // namespace

StepRule RuleFromEhFrame(const ImageInMemory& m, uint64_t pc, std::pair<uint64_t, uint64_t>* row) {
  StepRule rule;
  rule.pc = pc;
  rule.kind = StepRule::kUnknown;
  uint64_t fde = FindFde(m, pc);
  if (!fde) return rule;
  DwarfBytes r{fde, m.segmentEnd(fde)};
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
  State state;
  std::pair<uint64_t, uint64_t> holds;
  if (!StateAt(cie, r, start, pc, 0, &state, &holds, start + range)) return rule;
  if (row && holds.first <= pc && pc < holds.second) *row = holds;
  if (state.ra.kind == Rule::kUndefined) {
    rule.kind = StepRule::kOutermost;
    return rule;
  }
  if (!state.cfa_known || state.ra.kind != Rule::kAtCfa || state.ra.offset != -8) return rule;
  rule.cfa_offset = int32_t(state.cfa_offset);
  rule.cfa_from_rbp = state.cfa_reg == kDwarfRbp;
  if (state.rbp.kind == Rule::kSame) {
    rule.kind = StepRule::kStep;
  } else if (state.rbp.kind == Rule::kAtCfa && state.rbp.offset >= INT16_MIN &&
             state.rbp.offset <= INT16_MAX) {
    rule.kind = StepRule::kStepSavedRbp;
    rule.rbp_offset = int16_t(state.rbp.offset);
  }
  return rule;
}

}  // namespace hotline::unwind

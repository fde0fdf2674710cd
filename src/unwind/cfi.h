// The one interpreter of DWARF call-frame instructions (.eh_frame and .debug_frame alike), as far
// as x86-64 stack walks need them: where the CFA is (rsp or rbp plus an offset), where the return
// address and rbp are saved. Anything else (a CFA from another register or an expression, a
// register saved in a register) is marked unknown, and the walk that meets it gives up there.
// No allocation, no exception: the runtime runs it inside the profiled program.
#pragma once

#include <cstdint>
#include <utility>

#include "unwind/dwarf_bytes.h"

namespace hotline::unwind {

// DWARF register numbers of x86-64 (psABI figure 3.36).
inline constexpr uint64_t kDwarfRbp = 6, kDwarfRsp = 7, kDwarfRa = 16;

// How a register of the caller is found.
struct Rule {
  enum Kind : uint8_t { kSame, kUndefined, kAtCfa, kUnknown } kind = kUnknown;
  int32_t offset = 0;  // kAtCfa: the value is saved at CFA + offset
};

// The rules of one row.
struct State {
  uint32_t cfa_reg = 0;
  int64_t cfa_offset = 0;
  bool cfa_known = false;  // CFA = rsp or rbp + cfa_offset, the offset fitting 32 bits
  Rule rbp{Rule::kSame, 0}, ra;
};

struct Cie {
  uint64_t code_align = 1;
  int64_t data_align = 1;
  uint64_t ra_column = kDwarfRa;
  uint8_t fde_enc = 0;  // .eh_frame: how the FDE's addresses are encoded
  bool has_augmentation_data = false;
  bool signal_frame = false;
  // .debug_frame: DW_CFA_set_loc takes a link-time address (the module's bias is added).
  // .eh_frame: its operand would be in the FDE's encoding, which no x86-64 compiler emits.
  bool set_loc = false;
  uint64_t insns = 0, insns_end = 0;  // addresses in memory
};

enum class Run { kEnded, kStopped, kFailed };

// Runs the instructions `r` from `*state` (`initial` is the CIE's state, for DW_CFA_restore).
// Each time the location advances, `advance(next)` is called with *state the rules of
// [*loc, next); returning false stops the run there (kStopped), else *loc becomes next. kEnded:
// the instructions ran out (the last state holds to the end of the function). kFailed: an
// instruction not known or a damaged one.
template <typename Advance>
Run Execute(DwarfBytes r, const Cie& cie, uint64_t bias, const State& initial, State* state,
            uint64_t* loc, Advance advance) {
  constexpr int kStackDepth = 16;
  State stack[kStackDepth];
  int depth = 0;
  auto rule = [&](uint64_t reg) -> Rule* {
    if (reg == kDwarfRbp) return &state->rbp;
    if (reg == cie.ra_column) return &state->ra;
    return nullptr;
  };
  auto set = [&](uint64_t reg, Rule::Kind kind, int64_t offset = 0) {
    if (Rule* r = rule(reg)) {
      bool fits = offset >= INT32_MIN && offset <= INT32_MAX;
      *r = Rule{fits ? kind : Rule::kUnknown, int32_t(offset)};
    }
  };
  auto restore = [&](uint64_t reg) {
    if (reg == kDwarfRbp) state->rbp = initial.rbp;
    if (reg == cie.ra_column) state->ra = initial.ra;
  };
  auto set_cfa = [&](uint64_t reg, int64_t offset) {
    state->cfa_reg = uint32_t(reg);
    state->cfa_offset = offset;
    state->cfa_known =
        (reg == kDwarfRsp || reg == kDwarfRbp) && offset >= INT32_MIN && offset <= INT32_MAX;
  };
  auto move_to = [&](uint64_t next) {
    if (next <= *loc) return true;  // a row of no length ends nothing
    if (!advance(next)) return false;
    *loc = next;
    return true;
  };
  const int64_t daf = cie.data_align;
  const uint64_t caf = cie.code_align;
  while (r.ok && r.p < r.end) {
    uint8_t op = uint8_t(r.fixed(1));
    uint8_t low = op & 0x3f;
    switch (op >> 6) {
      case 1:  // DW_CFA_advance_loc
        if (!move_to(*loc + low * caf)) return Run::kStopped;
        continue;
      case 2:  // DW_CFA_offset
        set(low, Rule::kAtCfa, int64_t(r.uleb()) * daf);
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
      case 0x01:  // DW_CFA_set_loc
        if (!cie.set_loc) return Run::kFailed;
        if (!move_to(r.fixed(8) + bias)) return Run::kStopped;
        break;
      case 0x02:  // DW_CFA_advance_loc1
        if (!move_to(*loc + r.fixed(1) * caf)) return Run::kStopped;
        break;
      case 0x03:  // DW_CFA_advance_loc2
        if (!move_to(*loc + r.fixed(2) * caf)) return Run::kStopped;
        break;
      case 0x04:  // DW_CFA_advance_loc4
        if (!move_to(*loc + r.fixed(4) * caf)) return Run::kStopped;
        break;
      case 0x05: {  // DW_CFA_offset_extended
        uint64_t reg = r.uleb();
        set(reg, Rule::kAtCfa, int64_t(r.uleb()) * daf);
        break;
      }
      case 0x06:  // DW_CFA_restore_extended
        restore(r.uleb());
        break;
      case 0x07:  // DW_CFA_undefined
        set(r.uleb(), Rule::kUndefined);
        break;
      case 0x08:  // DW_CFA_same_value
        set(r.uleb(), Rule::kSame);
        break;
      case 0x09:  // DW_CFA_register: in a register the walk does not track
        set(r.uleb(), Rule::kUnknown);
        r.uleb();
        break;
      case 0x0a:  // DW_CFA_remember_state
        if (depth == kStackDepth) return Run::kFailed;
        stack[depth++] = *state;
        break;
      case 0x0b:  // DW_CFA_restore_state: the CFA too, as GCC's epilogues expect
        if (depth == 0) return Run::kFailed;
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
        set(r.uleb(), Rule::kUnknown);
        r.skip(r.uleb());
        break;
      }
      case 0x11: {  // DW_CFA_offset_extended_sf
        uint64_t reg = r.uleb();
        set(reg, Rule::kAtCfa, r.sleb() * daf);
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
        set(r.uleb(), Rule::kUnknown);
        r.uleb();
        break;
      case 0x15:  // DW_CFA_val_offset_sf
        set(r.uleb(), Rule::kUnknown);
        r.sleb();
        break;
      case 0x2e:  // DW_CFA_GNU_args_size: no bearing on the registers
        r.uleb();
        break;
      case 0x2f: {  // DW_CFA_GNU_negative_offset_extended
        uint64_t reg = r.uleb();
        set(reg, Rule::kAtCfa, -int64_t(r.uleb()) * daf);
        break;
      }
      default:  // what no x86-64 compiler emits
        return Run::kFailed;
    }
  }
  return r.ok ? Run::kEnded : Run::kFailed;
}

// The state that holds `target` in the FDE whose instructions are `fde_insns` for the function
// at [start, start + range): the CIE's instructions run first. False when an instruction is not
// known or the tables are damaged. `row`, when given, receives the addresses the state holds for
// ([row->first, row->second); the second is the function's end when the instructions run out).
inline bool StateAt(const Cie& cie, DwarfBytes fde_insns, uint64_t start, uint64_t target,
                    uint64_t bias, State* out, std::pair<uint64_t, uint64_t>* row = nullptr,
                    uint64_t end = 0) {
  State initial;
  uint64_t loc = start;
  auto never = [](uint64_t) { return true; };
  if (Execute(DwarfBytes{cie.insns, cie.insns_end}, cie, bias, initial, &initial, &loc, never) ==
      Run::kFailed)
    return false;
  *out = initial;
  loc = start;
  uint64_t row_end = end;
  Run run = Execute(fde_insns, cie, bias, initial, out, &loc, [&](uint64_t next) {
    if (next <= target) return true;
    row_end = next;
    return false;
  });
  if (row) *row = {loc, row_end};
  return run != Run::kFailed;
}

}  // namespace hotline::unwind

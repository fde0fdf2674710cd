// Unwind rules from an image's .eh_frame, found through its .eh_frame_hdr's sorted table (as
// libunwind finds them), for the common x86-64 frame: CFA = rsp or rbp + k, the return address
// at CFA - 8, rbp unchanged or saved at CFA + k. Used by the runtime's heap walker on the loaded
// images of its own process, and by the recorder on copies of a sampled program's files mapped
// as the loader maps them. Reads only inside the image's readable segments; no allocation.
#pragma once

#include <cstdint>
#include <utility>

namespace hotline::unwind {

// An ELF image as it lies in this process's memory: its .eh_frame_hdr and readable segments,
// at their addresses here.
struct ImageInMemory {
  static constexpr int kMaxSegments = 16;
  uint64_t eh_frame_hdr = 0;
  int segments = 0;
  uint64_t seg_start[kMaxSegments] = {}, seg_end[kMaxSegments] = {};

  // The end of the readable segment holding `address`, or 0.
  uint64_t segmentEnd(uint64_t address) const {
    for (int i = 0; i < segments; ++i)
      if (address >= seg_start[i] && address < seg_end[i]) return seg_end[i];
    return 0;
  }
};

// How a frame's caller follows from the frame's registers.
struct StepRule {
  enum Kind : uint8_t {
    kEmpty = 0,     // no rule (a cache's free slot)
    kStep,          // CFA = reg + cfa_offset, return address at CFA - 8, rbp unchanged
    kStepSavedRbp,  // the same, rbp saved at CFA + rbp_offset
    kOutermost,     // the return address is undefined: the stack ends here (_start, clone)
    kUnknown,       // anything else: a signal frame, a CFA from an expression, no FDE
  };
  uint64_t pc = 0;  // the address it was looked up for (image's addresses as in memory here)
  int32_t cfa_offset = 0;
  int16_t rbp_offset = 0;
  uint8_t kind = kEmpty;
  uint8_t cfa_from_rbp = 0;
};

// The rule for `pc` (an address of the image as it lies here; a return address minus 1 for
// every frame but the innermost) from the image's .eh_frame. `row`, when given and the rule
// comes from a table row, receives the addresses the same rule holds for: a cache can then
// answer every address of a big function's body from one lookup.
StepRule RuleFromEhFrame(const ImageInMemory& image, uint64_t pc,
                         std::pair<uint64_t, uint64_t>* row = nullptr);

}  // namespace hotline::unwind

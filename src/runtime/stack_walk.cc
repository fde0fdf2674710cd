#include "runtime/stack_walk.h"

#include <elf.h>
#include <link.h>

#include <cstddef>
#include <cstring>

#include "unwind/dwarf_bytes.h"
#include "unwind/eh_frame.h"

namespace hotline::rt {
namespace {

using unwind::ImageInMemory;
using unwind::StepRule;

// The walker reads stack words at addresses it computed, each checked against the thread's
// stack bounds before it is read.
inline uint64_t LoadWord(uint64_t address) {
  uint64_t v;
  std::memcpy(&v, unwind::AtAddress(address), 8);
  return v;
}

struct FindModule {
  uint64_t pc;
  StepRule rule;
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
  ImageInMemory m;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uint64_t start = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_GNU_EH_FRAME) m.eh_frame_hdr = start;
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_R) && m.segments < ImageInMemory::kMaxSegments) {
      m.seg_start[m.segments] = start;
      m.seg_end[m.segments] = start + ph.p_memsz;
      ++m.segments;
    }
  }
  // Decoded here, with the loader's lock held: the module cannot be unloaded meanwhile.
  find->rule = unwind::RuleFromEhFrame(m, find->pc);
  return 1;
}

StepRule DecodeRule(uint64_t pc) {
  FindModule find{pc, StepRule{pc, 0, 0, StepRule::kUnknown, 0}};
  dl_iterate_phdr(OnModule, &find);
  return find.rule;
}

const StepRule& RuleFor(StackWalker* w, uint64_t pc) {
  StepRule& slot = w->rules[(pc * 0x9E3779B97F4A7C15ull) >> 51];
  static_assert(StackWalker::kRuleSlots == 1 << 13);
  if (slot.pc != pc || slot.kind == StepRule::kEmpty) slot = DecodeRule(pc);
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
// One walk asks for ever smaller k (each frame of the new walk that meets one of the old walk's),
// so what it learnt is kept: frames below `unchanged` hold their words, frame `changed` (and so
// every k from it on) does not. Each frame's words are read once per walk, however many of the
// new walk's frames meet the old one's (many call sites: a frame of each path at each depth).
struct OuterCheck {
  int unchanged = 0;
  int changed = kMaxWalkFrames;

  bool holds(const StackWalker* w, int k) {
    if (k < unchanged) return true;
    if (k >= changed) return false;
    for (int i = unchanged; i <= k; ++i) {
      const WalkedFrame& f = w->frames[i];
      if ((f.ra_slot && LoadWord(f.ra_slot) != f.ra_value) ||
          (f.bp_slot && LoadWord(f.bp_slot) != f.bp_value)) {
        unchanged = i;
        changed = i;
        return false;
      }
    }
    unchanged = k + 1;
    return true;
  }
};

}  // namespace

uint64_t HashStack(const uint64_t* frames, int depth) {
  uint64_t h = kStackHashSeed;
  for (int i = depth; i-- > 0;) h = HashStackStep(h, frames[i]);
  return h | 1;
}

void ResetWalker(StackWalker* walker, bool keep_rules) {
  if (!keep_rules)
    for (StepRule& rule : walker->rules) rule = StepRule{};
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
  OuterCheck outer;
  for (;;) {
    while (k >= 0 && w->frames[k].sp < sp) --k;
    if (k >= 0 && w->frames[k].sp == sp && w->frames[k].pc == pc && w->frames[k].bp == bp &&
        outer.holds(w, k)) {
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
    const StepRule& rule = RuleFor(w, pc - 1);
    if (rule.kind == StepRule::kOutermost) {
      k = -1;
      break;
    }
    if (rule.kind != StepRule::kStep && rule.kind != StepRule::kStepSavedRbp) return -1;
    uint64_t cfa = (rule.cfa_from_rbp ? bp : sp) + uint64_t(int64_t(rule.cfa_offset));
    uint64_t ra_slot = cfa - 8;
    if (cfa <= sp || cfa > high || ra_slot < sp || ra_slot > high - 8) return -1;
    uint64_t ra = LoadWord(ra_slot);
    f.ra_slot = ra_slot, f.ra_value = ra;
    uint64_t next_bp = bp;
    if (rule.kind == StepRule::kStepSavedRbp) {
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

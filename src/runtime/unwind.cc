#include "runtime/unwind.h"

#include <ucontext.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "format/schema.h"

namespace hotline::rt {

void InitUnwinder() { unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD); }

uint32_t UnwindFramePointers(void* ucontext, const StackBounds& bounds, uint64_t* frames,
                             uint32_t max, uint32_t* flags) {
  const auto* uc = static_cast<const ucontext_t*>(ucontext);
  uint64_t pc = uint64_t(uc->uc_mcontext.gregs[REG_RIP]);
  uint64_t fp = uint64_t(uc->uc_mcontext.gregs[REG_RBP]);
  uint64_t sp = uint64_t(uc->uc_mcontext.gregs[REG_RSP]);
  // Without known bounds, trust only what lies between the stack pointer and 8 MiB above it.
  uint64_t low = bounds.low ? bounds.low : sp;
  uint64_t high = bounds.high ? bounds.high : sp + (8u << 20);
  uint32_t n = 0;
  if (max == 0) return 0;
  frames[n++] = pc;
  while (n < max) {
    if (fp < low || fp < sp || fp + 16 > high || (fp & 7)) {
      // fp == 0 is how the outermost frame ends the chain; anything else is a broken walk.
      if (fp != 0) *flags |= format::kSampleBroken;
      return n;
    }
    const auto* frame = reinterpret_cast<const uint64_t*>(fp);
    uint64_t next_fp = frame[0];
    uint64_t ret = frame[1];
    if (ret == 0) return n;
    frames[n++] = ret;
    if (next_fp != 0 && next_fp <= fp) {
      *flags |= format::kSampleBroken;
      return n;
    }
    sp = fp;
    fp = next_fp;
  }
  *flags |= format::kSampleTruncated;
  return n;
}

uint32_t UnwindDwarf(void* ucontext, uint64_t* frames, uint32_t max, uint32_t* flags) {
  unw_cursor_t cursor;
  if (max == 0) return 0;
  if (unw_init_local2(&cursor, static_cast<unw_context_t*>(ucontext), UNW_INIT_SIGNAL_FRAME) < 0) {
    const auto* uc = static_cast<const ucontext_t*>(ucontext);
    frames[0] = uint64_t(uc->uc_mcontext.gregs[REG_RIP]);
    *flags |= format::kSampleBroken;
    return 1;
  }
  uint32_t n = 0;
  for (;;) {
    unw_word_t ip = 0;
    if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) break;
    if (n == max) {
      *flags |= format::kSampleTruncated;
      break;
    }
    frames[n++] = uint64_t(ip);
    int step = unw_step(&cursor);
    if (step == 0) break;  // the outermost frame
    if (step < 0) {
      *flags |= format::kSampleBroken;
      break;
    }
  }
  return n;
}

}  // namespace hotline::rt

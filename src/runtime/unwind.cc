#include "runtime/unwind.h"

#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <cstring>

#include "format/schema.h"
#include "runtime/debug_frame.h"
#include "runtime/threads.h"

namespace hotline::rt {

void InitUnwinder() { unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD); }

StackWindow::StackWindow(const StackBounds& bounds, uint64_t sp)
    : low(bounds.low ? bounds.low : sp),
      high(bounds.high ? bounds.high : sp + (8u << 20)),
      known(bounds.low != 0 && bounds.high != 0) {}

bool StackWindow::read(uint64_t address, uint64_t* value) const {
  if (address < low || address > high || high - address < 8 || (address & 7)) return false;
  if (known) {
    *value = *reinterpret_cast<const uint64_t*>(address);
    return true;
  }
  iovec local{value, 8}, remote{reinterpret_cast<void*>(address), 8};
  return syscall(SYS_process_vm_readv, getpid(), &local, 1, &remote, 1, 0) == 8;
}

uint32_t UnwindFramePointers(void* ucontext, const StackBounds& bounds, uint64_t* frames,
                             uint32_t max, uint32_t* flags) {
  const auto* uc = static_cast<const ucontext_t*>(ucontext);
  uint64_t pc = uint64_t(uc->uc_mcontext.gregs[REG_RIP]);
  uint64_t fp = uint64_t(uc->uc_mcontext.gregs[REG_RBP]);
  uint64_t sp = uint64_t(uc->uc_mcontext.gregs[REG_RSP]);
  // The frame pointer is whatever the code left in rbp (a general register where frame pointers
  // are omitted): every word is read through the window, so a garbage one cannot fault.
  const StackWindow window(bounds, sp);
  uint32_t n = 0;
  if (max == 0) return 0;
  frames[n++] = pc;
  while (n < max) {
    uint64_t next_fp = 0, ret = 0;
    if (fp < sp || !window.read(fp, &next_fp) || !window.read(fp + 8, &ret)) {
      // fp == 0 is how the outermost frame ends the chain; anything else is a broken walk.
      if (fp != 0) *flags |= format::kSampleBroken;
      return n;
    }
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

namespace {

// True when libunwind has .eh_frame (or dynamic) information for `pc`: a walk that libunwind
// ends at such a frame ended where the unwind information says the stack ends.
bool HasUnwindInfo(uint64_t pc) {
  unw_proc_info_t pi;
  return unw_get_proc_info_by_ip(unw_local_addr_space, pc, &pi, nullptr) == 0 &&
         pi.start_ip <= pc && pc < pi.end_ip;
}

}  // namespace

uint64_t UnwindEntryEnd(uint64_t pc) {
  unw_proc_info_t pi;
  if (unw_get_proc_info_by_ip(unw_local_addr_space, pc, &pi, nullptr) != 0) return 0;
  return pi.start_ip <= pc && pc < pi.end_ip ? pi.end_ip : 0;
}

uint32_t UnwindDwarf(void* ucontext, uint64_t* frames, uint32_t max, uint32_t* flags) {
  unw_cursor_t cursor;
  if (max == 0) return 0;
  const auto* uc = static_cast<const ucontext_t*>(ucontext);
  if (unw_init_local2(&cursor, static_cast<unw_context_t*>(ucontext), UNW_INIT_SIGNAL_FRAME) < 0) {
    frames[0] = uint64_t(uc->uc_mcontext.gregs[REG_RIP]);
    *flags |= format::kSampleBroken;
    return 1;
  }
  // Stack reads of the .debug_frame steps go through the window, as the frame-pointer walk's do.
  uint64_t sp = uint64_t(uc->uc_mcontext.gregs[REG_RSP]);
  const ThreadSlot* slot = CurrentSlot();
  const StackWindow window(slot ? slot->bounds : StackBounds{}, sp);
  // After steps of its own the walk hands the registers back to libunwind through this context.
  ucontext_t resume;
  bool in_cursor = true;
  uint64_t ip = 0, bp = 0;
  uint32_t n = 0;
  for (;;) {
    if (in_cursor) {
      unw_word_t reg_ip = 0, reg_sp = 0, reg_bp = 0;
      if (unw_get_reg(&cursor, UNW_REG_IP, &reg_ip) < 0 ||
          unw_get_reg(&cursor, UNW_X86_64_RSP, &reg_sp) < 0 ||
          unw_get_reg(&cursor, UNW_X86_64_RBP, &reg_bp) < 0) {
        *flags |= format::kSampleBroken;
        break;
      }
      ip = reg_ip, sp = reg_sp, bp = reg_bp;
    }
    if (ip == 0) break;
    if (n == max) {
      *flags |= format::kSampleTruncated;
      break;
    }
    frames[n++] = ip;
    // _start is where the main thread begins, whatever its unwind information says beyond it.
    if (InEntryFunction(ip)) break;
    // Every frame but the interrupted one holds a return address, which may lie just past its
    // call's function.
    uint64_t lookup = n == 1 ? ip : ip - 1;
    CfiStep own = StepDebugFrame(lookup, &ip, &sp, &bp, window);
    if (own == CfiStep::kStepped) {
      in_cursor = false;
      continue;
    }
    if (own == CfiStep::kOutermost) break;
    if (own == CfiStep::kFailed) {
      *flags |= format::kSampleBroken;
      break;
    }
    if (!in_cursor) {
      std::memset(&resume, 0, sizeof resume);
      resume.uc_mcontext.gregs[REG_RIP] = int64_t(ip);
      resume.uc_mcontext.gregs[REG_RSP] = int64_t(sp);
      resume.uc_mcontext.gregs[REG_RBP] = int64_t(bp);
      // Flag 0: the ip is a return address, looked up one byte back.
      if (unw_init_local2(&cursor, reinterpret_cast<unw_context_t*>(&resume), 0) < 0) {
        *flags |= format::kSampleBroken;
        break;
      }
      in_cursor = true;
    }
    int step = unw_step(&cursor);
    if (step > 0) continue;
    // libunwind also answers 0 when it found no unwind information and gave up; only a frame
    // whose information ends the stack (_start, clone) makes the walk complete.
    if (step < 0 || !HasUnwindInfo(lookup)) *flags |= format::kSampleBroken;
    break;
  }
  return n;
}

}  // namespace hotline::rt

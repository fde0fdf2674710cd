#include "sampler/stack_unwinder.h"

#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdwfl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "base/address_space.h"
#include "sampler/debug_frame_fixup.h"

namespace hotline::sampler {
namespace {

// What the callbacks need while one sample is unwound.
struct Current {
  const PerfSample* sample = nullptr;
  // The walk asked for a word above the end of the copy: the stack goes on past it.
  bool past_copy = false;
};

pid_t NextThread(Dwfl*, void* arg, void** thread_arg) {
  // Only the sample's thread is ever unwound, and only through dwfl_getthread_frames.
  *thread_arg = arg;
  return 0;
}

bool GetThread(Dwfl*, pid_t tid, void* arg, void** thread_arg) {
  auto* current = static_cast<Current*>(arg);
  *thread_arg = arg;
  return current->sample && current->sample->tid == uint32_t(tid);
}

// Memory is the sample's copy of the stack, and nothing else.
bool MemoryRead(Dwfl*, Dwarf_Addr address, Dwarf_Word* result, void* arg) {
  auto* current = static_cast<Current*>(arg);
  const PerfSample* s = current->sample;
  uint64_t sp = s->regs.sp;
  if (address < sp || address - sp > s->stack.size() || s->stack.size() - (address - sp) < 8) {
    // A word above the copy, within reach of a stack (8 MiB, as a thread's): the copy was too
    // short for this stack. Anything else is a frame that cannot be followed.
    if (address >= sp && address - sp < (uint64_t{8} << 20)) current->past_copy = true;
    return false;
  }
  std::memcpy(result, s->stack.data() + (address - sp), 8);
  return true;
}

bool SetInitialRegisters(Dwfl_Thread* thread, void* arg) {
  const UserRegs& r = static_cast<Current*>(arg)->sample->regs;
  // DWARF's x86-64 numbering: rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, return address.
  const Dwarf_Word regs[17] = {r.ax, r.dx,  r.cx,  r.bx,  r.si,  r.di,  r.bp,  r.sp, r.r8,
                               r.r9, r.r10, r.r11, r.r12, r.r13, r.r14, r.r15, r.ip};
  if (!dwfl_thread_state_registers(thread, 0, 17, regs)) return false;
  dwfl_thread_state_register_pc(thread, r.ip);
  return true;
}

const Dwfl_Thread_Callbacks kThreadCallbacks = {NextThread,          GetThread, MemoryRead,
                                                SetInitialRegisters, nullptr,   nullptr};

// The walk needs call-frame information, which x86-64 code carries in its own file (.eh_frame,
// or .debug_frame beside it); a separate debug file is not looked for. elfutils would otherwise
// open the whole DWARF of one (libc6-dbg's, compressed) to look for a .debug_frame there: 100 ms
// of inflating at the first sample that falls back here, where the unwinding itself takes µs.
int NoSeparateDebugInfo(Dwfl_Module*, void**, const char*, Dwarf_Addr, const char*, const char*,
                        GElf_Word, char**) {
  return -1;
}
char* g_debuginfo_path = nullptr;
const Dwfl_Callbacks kCallbacks = {dwfl_linux_proc_find_elf, NoSeparateDebugInfo, nullptr,
                                   &g_debuginfo_path};

struct FrameWalk {
  UnwoundStack* out;
  uint32_t max;
};

int OnFrame(Dwfl_Frame* frame, void* arg) {
  auto* walk = static_cast<FrameWalk*>(arg);
  Dwarf_Addr pc = 0;
  if (!dwfl_frame_pc(frame, &pc, nullptr)) return DWARF_CB_ABORT;
  if (walk->out->frames.size() == walk->max) {
    walk->out->truncated = true;
    return DWARF_CB_ABORT;
  }
  walk->out->frames.push_back(pc);
  return DWARF_CB_OK;
}

}  // namespace

// A file holding this process's vDSO image (a memfd, made once), or "" when there is none.
std::string OwnVdsoImage() {
  static const std::string path = [] {
    auto* image = reinterpret_cast<const uint8_t*>(getauxval(AT_SYSINFO_EHDR));
    if (!image) return std::string();
    // Its extent: the end of its section headers, which come last in the kernel's image.
    const auto* header = reinterpret_cast<const Elf64_Ehdr*>(image);
    size_t size = header->e_shoff + size_t(header->e_shnum) * header->e_shentsize;
    int fd = memfd_create("hotline-vdso", MFD_CLOEXEC);
    if (fd < 0) return std::string();
    if (write(fd, image, size) != ssize_t(size)) {
      close(fd);
      return std::string();
    }
    return "/proc/self/fd/" + std::to_string(fd);
  }();
  return path;
}

// The file whose unwind tables describe mapping `m`. The vDSO has no file; the kernel gives
// every process the same one, so the recorder's own image unwinds the program's.
std::string CfiFileOf(const PerfMapping& m) {
  return m.path == kVdso ? OwnVdsoImage() : ReadableCfiFile(m.path);
}

struct StackUnwinder::Process {
  std::vector<PerfMapping> mappings;  // executable file mappings, in the order reported
  Dwfl* dwfl = nullptr;
  bool attached = false;
  Current current;

  ~Process() { reset(); }
  void reset() {
    if (dwfl) dwfl_end(dwfl);
    dwfl = nullptr;
    attached = false;
  }
  void report(const PerfMapping& m) {
    if (!dwfl) dwfl = dwfl_begin(&kCallbacks);
    if (!dwfl) return;
    std::string path = CfiFileOf(m);
    if (path.empty()) return;
    dwfl_report_begin_add(dwfl);
    // The file's load address, as perf computes it: where its offset 0 would be mapped.
    const char* name = std::strrchr(m.path.c_str(), '/');
    dwfl_report_elf(dwfl, name ? name + 1 : m.path.c_str(), path.c_str(), -1,
                    m.address - m.file_offset, false);
    dwfl_report_end(dwfl, nullptr, nullptr);
  }
};

StackUnwinder::StackUnwinder() = default;
StackUnwinder::~StackUnwinder() = default;

StackUnwinder::Process* StackUnwinder::process(uint32_t pid) {
  std::unique_ptr<Process>& p = processes_[pid];
  if (!p) p = std::make_unique<Process>();
  return p.get();
}

void StackUnwinder::onMapping(const PerfMapping& m) {
  // Executable files, and the vDSO.
  if (!(m.prot & 4) || m.path.empty() || (m.path[0] != '/' && m.path != kVdso)) return;
  Process* p = process(m.pid);
  p->mappings.push_back(m);
  p->report(m);
  fast_.onMapping(m, CfiFileOf(m));
}

void StackUnwinder::onTask(const PerfTask& task) {
  if (task.exit || task.pid == task.ppid) return;  // a thread: same address space
  // A forked child starts with a copy of its parent's address space.
  fast_.onFork(task.ppid, task.pid);
  Process* child = process(task.pid);
  child->reset();
  child->mappings = process(task.ppid)->mappings;
  for (const PerfMapping& m : child->mappings) child->report(m);
}

void StackUnwinder::onComm(const PerfComm& comm) {
  if (!comm.exec) return;
  fast_.onExec(comm.pid);
  Process* p = process(comm.pid);  // a new program: its mappings follow this record
  p->reset();
  p->mappings.clear();
}

UnwoundStack StackUnwinder::unwind(const PerfSample& sample, uint32_t max_depth) {
  UnwoundStack out;
  if (max_depth > 0 && fast_.unwind(sample, max_depth, &out) == FastUnwinder::Result::kDone)
    return out;
  out = unwindWithElfutils(sample, max_depth);
  uint64_t ra = 0;
  if (out.incomplete && out.frames.size() == 1 && max_depth > 1 &&
      SystemCallWithoutCfi(sample, &ra)) {
    // The caller's frame on: the wrapper pushed nothing, its return address is the top word.
    PerfSample caller = sample;
    caller.regs.ip = ra;
    caller.regs.sp += 8;
    caller.stack = sample.stack.subspan(8);
    UnwoundStack rest = unwind(caller, max_depth - 1);
    rest.frames.insert(rest.frames.begin(), sample.regs.ip);
    return rest;
  }
  return out;
}

// A thread sampled in a system call made from code without call-frame information: glibc's
// clone3 (and clone) end theirs before the `syscall`, because the new thread runs the code after
// it on a stack of its own. In the caller's thread nothing has been pushed since the call: the
// word at sp is the return address, which is taken when the code before it is a call. Short
// threads' parents spend much of their time there (2,000 threads of 0.3 ms: a quarter of the
// samples, all [broken stack] before).
bool StackUnwinder::SystemCallWithoutCfi(const PerfSample& sample, uint64_t* ra) const {
  constexpr uint64_t kInSystemCall = uint64_t(-38);  // rax while the kernel runs it: -ENOSYS
  uint8_t before[2];
  if (sample.ip < kKernelSpaceStart || !sample.regs.valid || sample.regs.ax != kInSystemCall ||
      !fast_.readCode(sample.pid, sample.regs.ip - 2, before, 2) || before[0] != 0x0f ||
      before[1] != 0x05 || sample.stack.size() < 8)
    return false;
  std::memcpy(ra, sample.stack.data(), 8);
  // A return address follows a call: e8 rel32 (5 bytes), or ff /2 through a register or memory
  // (2 to 7 bytes).
  uint8_t code[7];
  if (!fast_.readCode(sample.pid, *ra - 7, code, 7)) return false;
  if (code[2] == 0xe8) return true;
  for (int length = 2; length <= 7; ++length) {
    const uint8_t* call = code + 7 - length;
    if (call[0] == 0xff && ((call[1] >> 3) & 7) == 2) return true;
    if (length >= 3 && call[0] == 0x41 && call[1] == 0xff && ((call[2] >> 3) & 7) == 2) return true;
  }
  return false;
}

UnwoundStack StackUnwinder::unwindWithElfutils(const PerfSample& sample, uint32_t max_depth) {
  UnwoundStack out;
  if (!sample.regs.valid || max_depth == 0) {
    out.incomplete = true;
    out.why = "no user registers";
    return out;
  }
  Process* p = process(sample.pid);
  if (!p->dwfl) {
    out.frames.push_back(sample.regs.ip);
    out.incomplete = true;
    out.why = "no mapping known for the process";
    return out;
  }
  if (!p->attached) {
    p->attached =
        dwfl_attach_state(p->dwfl, nullptr, pid_t(sample.pid), &kThreadCallbacks, &p->current);
    if (!p->attached) {
      out.frames.push_back(sample.regs.ip);
      out.incomplete = true;
      out.why = dwfl_errmsg(-1);
      return out;
    }
  }
  p->current.sample = &sample;
  p->current.past_copy = false;
  FrameWalk walk{&out, max_depth};
  int result = dwfl_getthread_frames(p->dwfl, pid_t(sample.tid), OnFrame, &walk);
  p->current.sample = nullptr;
  if (out.frames.empty()) out.frames.push_back(sample.regs.ip);
  // elfutils ends a walk quietly where it cannot read a return address: a walk that wanted a
  // word above the copy went on past it, whatever elfutils returned.
  if (out.truncated) return out;
  if (p->current.past_copy) {
    out.truncated = out.past_copy = true;
  } else if (result == -1) {
    out.incomplete = true;
    out.why = dwfl_errmsg(-1);
  }
  return out;
}

}  // namespace hotline::sampler

#include "sampler/fast_unwinder.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "base/address_space.h"
#include "sampler/recording.h"
#include "sampler/stack_unwinder.h"

namespace hotline::sampler {
namespace {

constexpr uint64_t kPage = 4096;
// A return address below this ends a stack (0 above all), as libunwind's fast trace has it.
constexpr uint64_t kLowestReturnAddress = 0x4000;
// How far past the entry point the entry routine's call to the rest of the start lies, at most
// (8 bytes in glibc's loader, 0x20 in crt1's _start).
constexpr uint64_t kEntryCode = 64;
// How far above the current frame the walk fetches the stack copy's lines ahead of reading them.
constexpr uint64_t kFetchAhead = 2048, kCacheLine = 64;

}  // namespace

// A program's file as the loader would map it: its readable segments at their virtual addresses
// plus `shift`, in a reservation of this process's own.
struct FastUnwinder::File {
  void* reservation = nullptr;
  size_t size = 0;
  int64_t shift = 0;  // here = the file's virtual address + shift
  unwind::ImageInMemory image;
  uint64_t entry = 0;  // here: where the kernel starts the process (the loader's or the program's)

  ~File() {
    if (reservation) munmap(reservation, size);
  }
};

FastUnwinder::FastUnwinder() = default;
FastUnwinder::~FastUnwinder() = default;

const FastUnwinder::File* FastUnwinder::fileFor(const std::string& path) {
  std::unique_ptr<File>& slot = files_[path];
  if (slot) return slot.get();
  slot = std::make_unique<File>();
  File& f = *slot;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return &f;
  Elf64_Ehdr eh;
  std::vector<Elf64_Phdr> phdrs;
  if (pread(fd, &eh, sizeof eh, 0) == ssize_t(sizeof eh) &&
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
      eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum > 0 && eh.e_phnum < 256) {
    phdrs.resize(eh.e_phnum);
    size_t bytes = phdrs.size() * sizeof(Elf64_Phdr);
    if (pread(fd, phdrs.data(), bytes, off_t(eh.e_phoff)) != ssize_t(bytes)) phdrs.clear();
  }
  uint64_t low = ~uint64_t(0), high = 0, hdr = 0;
  for (const Elf64_Phdr& ph : phdrs) {
    if (ph.p_type == PT_GNU_EH_FRAME) hdr = ph.p_vaddr;
    if (ph.p_type != PT_LOAD) continue;
    low = std::min(low, ph.p_vaddr & ~(kPage - 1));
    high = std::max(high, ph.p_vaddr + ph.p_memsz);
  }
  // Without .eh_frame_hdr (fpc's .debug_frame only, a stripped table) elfutils does it all.
  if (hdr == 0 || low >= high || high - low > (uint64_t(1) << 32)) {
    close(fd);
    return &f;
  }
  f.size = size_t((high - low + kPage - 1) & ~(kPage - 1));
  f.reservation = mmap(nullptr, f.size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (f.reservation == MAP_FAILED) {
    f.reservation = nullptr;
    close(fd);
    return &f;
  }
  uint64_t base = reinterpret_cast<uint64_t>(f.reservation);
  f.shift = int64_t(base - low);
  for (const Elf64_Phdr& ph : phdrs) {
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_R) || ph.p_filesz == 0 ||
        f.image.segments == unwind::ImageInMemory::kMaxSegments)
      continue;
    uint64_t page_vaddr = ph.p_vaddr & ~(kPage - 1);
    uint64_t page_offset = ph.p_offset & ~(kPage - 1);
    uint64_t length = ph.p_filesz + (ph.p_vaddr - page_vaddr);
    void* at = reinterpret_cast<void*>(page_vaddr + uint64_t(f.shift));
    if (mmap(at, length, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, off_t(page_offset)) == MAP_FAILED)
      continue;
    // Only the part the file fills is readable: what follows in memory is the program's bss.
    f.image.seg_start[f.image.segments] = ph.p_vaddr + uint64_t(f.shift);
    f.image.seg_end[f.image.segments] = ph.p_vaddr + ph.p_filesz + uint64_t(f.shift);
    ++f.image.segments;
  }
  close(fd);
  f.image.eh_frame_hdr = hdr + uint64_t(f.shift);
  if (!f.image.segmentEnd(f.image.eh_frame_hdr)) f.image.eh_frame_hdr = 0;
  if (eh.e_entry) f.entry = eh.e_entry + uint64_t(f.shift);
  return &f;
}

void FastUnwinder::onMapping(const PerfMapping& m, const std::string& file) {
  if (file.empty()) return;
  const File* f = fileFor(file);
  Process& p = processes_[m.pid];
  Mapping mapping{m.address, m.address + m.length, f->shift - int64_t(LoadBias(m)), f};
  // A new mapping over an old range replaces it (the old code is gone).
  std::erase_if(p.mappings, [&](const Mapping& old) {
    return old.start < mapping.end && mapping.start < old.end;
  });
  auto at = std::lower_bound(p.mappings.begin(), p.mappings.end(), mapping,
                             [](const Mapping& a, const Mapping& b) { return a.start < b.start; });
  p.mappings.insert(at, mapping);
}

void FastUnwinder::onFork(uint32_t parent, uint32_t child) {
  processes_[child] = processes_[parent];
}

void FastUnwinder::onExec(uint32_t pid) { processes_[pid].mappings.clear(); }

const FastUnwinder::Mapping* FastUnwinder::mappingAt(const Process& p, uint64_t pc) const {
  auto it = std::upper_bound(p.mappings.begin(), p.mappings.end(), pc,
                             [](uint64_t v, const Mapping& m) { return v < m.start; });
  if (it == p.mappings.begin()) return nullptr;
  --it;
  return pc < it->end ? &*it : nullptr;
}

bool FastUnwinder::readCode(uint32_t pid, uint64_t address, void* out, uint64_t size) const {
  auto found = processes_.find(pid);
  if (found == processes_.end()) return false;
  const Mapping* m = mappingAt(found->second, address);
  if (!m || address + size > m->end) return false;
  std::memcpy(out, reinterpret_cast<const void*>(address + uint64_t(m->shift)), size);
  return true;
}

const unwind::StepRule& FastUnwinder::ruleFor(const File& file, uint64_t pc_here) {
  unwind::StepRule& slot =
      recent_rules_[(pc_here * 0x9E3779B97F4A7C15ull) >> (64 - kRecentRuleBits)];
  if (slot.pc == pc_here && slot.kind != unwind::StepRule::kEmpty) return slot;
  // By the table row that holds the address: the interrupted instructions of a big function
  // (an interpreter's loop) are thousands of addresses under a few rows.
  auto row = rules_.upper_bound(pc_here);
  if (row != rules_.begin() && pc_here < std::prev(row)->second.end) {
    slot = std::prev(row)->second.rule;
  } else {
    std::pair<uint64_t, uint64_t> holds{pc_here, pc_here + 1};
    unwind::StepRule rule = unwind::RuleFromEhFrame(file.image, pc_here, &holds);
    rules_.insert_or_assign(holds.first, CachedRule{holds.second, rule});
    slot = rule;
  }
  slot.pc = pc_here;
  return slot;
}

FastUnwinder::Result FastUnwinder::unwind(const PerfSample& s, uint32_t max_depth,
                                          UnwoundStack* out) {
  auto give_up = [&] {
    ++gave_up_;
    out->frames.clear();
    return Result::kGaveUp;
  };
  auto found = processes_.find(s.pid);
  if (!s.regs.valid || found == processes_.end()) return give_up();
  const Process& p = found->second;
  const uint64_t copy_low = s.regs.sp, copy_size = s.stack.size();
  // A stack word of the copy, or false (and *past_copy when the word lies above the copy, in
  // reach of a stack: the copy was too short for it).
  auto read = [&](uint64_t address, uint64_t* value, bool* past_copy) {
    if (address < copy_low || address - copy_low > copy_size ||
        copy_size - (address - copy_low) < 8) {
      *past_copy = address >= copy_low && address - copy_low < (uint64_t{8} << 20);
      return false;
    }
    std::memcpy(value, s.stack.data() + (address - copy_low), 8);
    return true;
  };
  uint64_t ip = s.regs.ip, sp = s.regs.sp, bp = s.regs.bp;
  // The copy lies in the ring the kernel wrote from the program's CPU, so nearly every frame's
  // word is a cache miss, and the walk waits for each in turn (measured: 97% of its time). The
  // lines a little above the walk are fetched ahead, so that their misses overlap.
  uint64_t fetched = 0;  // the copy's bytes below this are fetched
  auto fetch_ahead = [&] {
    uint64_t until = std::min(sp - copy_low + kFetchAhead, copy_size);
    for (; fetched < until; fetched += kCacheLine) __builtin_prefetch(s.stack.data() + fetched);
  };
  out->frames.clear();
  for (bool innermost = true;; innermost = false) {
    fetch_ahead();
    if (out->frames.size() == max_depth) {
      out->truncated = true;
      break;
    }
    out->frames.push_back(ip);
    // A return address is looked up one byte back: the call it returns from.
    uint64_t lookup = innermost ? ip : ip - 1;
    const Mapping* m = mappingAt(p, lookup);
    if (!m || !m->file->image.eh_frame_hdr) return give_up();
    const unwind::StepRule& rule = ruleFor(*m->file, lookup + uint64_t(m->shift));
    if (rule.kind == unwind::StepRule::kOutermost) break;
    // The code at the entry point is the process's first frame. glibc's dynamic loader gives
    // its own (`_start`: mov %rsp,%rdi; call _dl_start) no call-frame information: a sample
    // taken while the loader maps and relocates the libraries ends there, whole.
    uint64_t here = lookup + uint64_t(m->shift);
    if (m->file->entry && here >= m->file->entry && here - m->file->entry < kEntryCode &&
        rule.kind != unwind::StepRule::kStep && rule.kind != unwind::StepRule::kStepSavedRbp)
      break;
    if (rule.kind != unwind::StepRule::kStep && rule.kind != unwind::StepRule::kStepSavedRbp)
      return give_up();
    uint64_t cfa = (rule.cfa_from_rbp ? bp : sp) + uint64_t(int64_t(rule.cfa_offset));
    if (cfa <= sp) return give_up();  // a frame that does not grow the stack: elfutils judges
    bool past_copy = false;
    uint64_t ra = 0, next_bp = bp;
    if (!read(cfa - 8, &ra, &past_copy) ||
        (rule.kind == unwind::StepRule::kStepSavedRbp &&
         !read(cfa + uint64_t(int64_t(rule.rbp_offset)), &next_bp, &past_copy))) {
      if (!past_copy) return give_up();
      out->truncated = out->past_copy = true;
      break;
    }
    if (ra < kLowestReturnAddress || ra >= kKernelSpaceStart) break;  // the end of the stack
    ip = ra, sp = cfa, bp = next_bp;
  }
  ++quick_;
  return Result::kDone;
}

}  // namespace hotline::sampler

#include "sampler/debug_frame_fixup.h"

#include <fcntl.h>
#include <gelf.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

namespace hotline::sampler {
namespace {

uint32_t Read32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

uint64_t Read64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

void Write32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }

using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;  // [start, end) of code

bool InCode(const Ranges& code, uint64_t pc, uint64_t range) {
  for (const auto& [start, end] : code)
    if (range != 0 && pc >= start && pc < end && range <= end - pc) return true;
  return false;
}

// Rewrites fpc's entries in `section` in place (see the header). Returns whether it changed any.
bool Standardise(std::vector<uint8_t>& section, const Ranges& code) {
  bool changed = false;
  size_t size = section.size();
  size_t previous = SIZE_MAX;  // the entry a zero word is folded into
  for (size_t offset = 0; offset + 4 <= size;) {
    uint8_t* entry = section.data() + offset;
    uint32_t length = Read32(entry);
    if (length == 0) {
      if (previous != SIZE_MAX) {
        Write32(section.data() + previous, Read32(section.data() + previous) + 4);
        changed = true;
      }
      offset += 4;
      continue;
    }
    if (length >= 0xfffffff0u || length > size - offset - 4) break;  // 64-bit DWARF or damaged
    bool fde = Read32(entry + 4) != 0xffffffffu;
    // [length][CIE pointer: 4 bytes, then fpc's 4 zero bytes][address 8][range 8][instructions]
    if (fde && length >= 4 + 4 + 8 + 8 && !InCode(code, Read64(entry + 8), Read64(entry + 16)) &&
        Read32(entry + 8) == 0 && InCode(code, Read64(entry + 12), Read64(entry + 20))) {
      std::memmove(entry + 8, entry + 12, length - 8);
      std::memset(entry + 4 + length - 4, 0, 4);  // DW_CFA_nop
      changed = true;
    }
    previous = offset;
    offset += 4 + size_t(length);
  }
  return changed;
}

// A copy of the file at `fd` (`size` bytes) in a memory file, with `patch` at `at`.
std::string PatchedCopy(int fd, off_t size, const std::vector<uint8_t>& patch, off_t at) {
  int copy = memfd_create("hotline-cfi", MFD_CLOEXEC);
  if (copy < 0) return {};
  off_t from = 0;
  while (from < size)
    if (sendfile(copy, fd, &from, size_t(size - from)) <= 0) break;
  if (from != size || pwrite(copy, patch.data(), patch.size(), at) != ssize_t(patch.size())) {
    close(copy);
    return {};
  }
  return "/proc/self/fd/" + std::to_string(copy);
}

std::string Examine(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return path;
  std::string result = path;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  size_t names = 0;
  if (elf && elf_getshdrstrndx(elf, &names) == 0) {
    Ranges code;
    Elf_Scn* frame = nullptr;
    GElf_Shdr frame_header{};
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr header;
      if (!gelf_getshdr(scn, &header)) continue;
      const char* name = elf_strptr(elf, names, header.sh_name);
      if (header.sh_flags & SHF_EXECINSTR)
        code.emplace_back(header.sh_addr, header.sh_addr + header.sh_size);
      if (name && std::strcmp(name, ".debug_frame") == 0 && header.sh_type == SHT_PROGBITS &&
          !(header.sh_flags & SHF_COMPRESSED)) {
        frame = scn;
        frame_header = header;
      }
    }
    Elf_Data* data = frame ? elf_rawdata(frame, nullptr) : nullptr;
    struct stat st;
    if (data && data->d_buf && data->d_size == frame_header.sh_size && fstat(fd, &st) == 0) {
      const auto* bytes = static_cast<const uint8_t*>(data->d_buf);
      std::vector<uint8_t> section(bytes, bytes + data->d_size);
      if (Standardise(section, code)) {
        std::string copy = PatchedCopy(fd, st.st_size, section, off_t(frame_header.sh_offset));
        if (!copy.empty()) result = copy;
      }
    }
  }
  if (elf) elf_end(elf);
  close(fd);
  return result;
}

}  // namespace

std::string ReadableCfiFile(const std::string& path) {
  static std::map<std::string, std::string> known;
  auto [it, inserted] = known.try_emplace(path);
  if (inserted) it->second = Examine(path);
  return it->second;
}

}  // namespace hotline::sampler

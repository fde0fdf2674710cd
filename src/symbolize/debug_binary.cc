#include "symbolize/debug_binary.h"

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

namespace hotline::symbolize {

DebugBinary::~DebugBinary() {
  if (dwarf) dwarf_end(dwarf);
  if (elf) elf_end(elf);
  if (fd >= 0) close(fd);
}

Expected<std::unique_ptr<DebugBinary>> OpenDebugBinary(const std::string& path,
                                                       const std::string& use) {
  auto binary = std::make_unique<DebugBinary>();
  binary->fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (binary->fd < 0) return Status::Error(path + ": cannot open");
  elf_version(EV_CURRENT);
  binary->elf = elf_begin(binary->fd, ELF_C_READ, nullptr);
  if (!binary->elf || elf_kind(binary->elf) != ELF_K_ELF)
    return Status::Error(path + ": not an ELF file");
  GElf_Ehdr eh;
  if (!gelf_getehdr(binary->elf, &eh) || eh.e_machine != EM_X86_64)
    return Status::Error(path + ": only x86-64 code can be " + use);
  binary->dwarf = dwarf_begin_elf(binary->elf, DWARF_C_READ, nullptr);
  if (!binary->dwarf) return Status::Error(path + ": no debug info (build with -g)");
  return binary;
}

}  // namespace hotline::symbolize

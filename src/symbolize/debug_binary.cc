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

void ForEachSymbol(Elf* elf, const std::function<void(const GElf_Sym&, const char* name)>& use) {
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn))) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || sh.sh_entsize == 0) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, int(i), &sym) || sym.st_shndx == SHN_UNDEF) continue;
      if (const char* name = elf_strptr(elf, sh.sh_link, sym.st_name)) use(sym, name);
    }
  }
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

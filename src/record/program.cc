#include "cli/program_check.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace hotline::cli {
namespace {

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// PATH lookup as execvp does it; returns "" when nothing executable is found.
std::string SearchPath(const std::string& name) {
  const char* env = getenv("PATH");
  std::string path = env ? env : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (IsExecutableFile(candidate)) return candidate;
    start = end + 1;
  }
  return {};
}

// Reads the ELF facts hotline cares about. A file libelf cannot read is treated as a script.
void InspectElf(ProgramInfo* info) {
  int fd = open(info->path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  if (elf && elf_kind(elf) == ELF_K_ELF) {
    info->is_elf = true;
    size_t count = 0;
    bool has_interp = false;
    if (elf_getphdrnum(elf, &count) == 0) {
      for (size_t i = 0; i < count; ++i) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, int(i), &ph) && ph.p_type == PT_INTERP) has_interp = true;
      }
    }
    GElf_Ehdr eh;
    // A shared object without PT_INTERP is still started by the dynamic loader when run.
    info->is_static = !has_interp && gelf_getehdr(elf, &eh) && eh.e_type == ET_EXEC;
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(elf, scn))) {
      GElf_Shdr sh;
      if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || sh.sh_entsize == 0) continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      if (!data) continue;
      size_t symbols = sh.sh_size / sh.sh_entsize;
      for (size_t i = 0; i < symbols; ++i) {
        GElf_Sym sym;
        if (!gelf_getsym(data, int(i), &sym) || sym.st_shndx != SHN_UNDEF) continue;
        const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
        if (!name) continue;
        if (std::strcmp(name, "__cyg_profile_func_enter") == 0) info->instrumented = true;
        if (std::strcmp(name, "mcount") == 0 || std::strcmp(name, "__fentry__") == 0)
          info->gprof = true;
      }
    }
  }
  if (elf) elf_end(elf);
  close(fd);
}

}  // namespace

Expected<ProgramInfo> InspectProgram(const std::string& name, int* exit_code, bool static_ok) {
  ProgramInfo info;
  if (name.find('/') != std::string::npos) {
    info.path = name;
  } else {
    info.path = SearchPath(name);
    if (info.path.empty()) {
      *exit_code = 127;
      return Status::Error(name + ": no such program (not found in PATH)");
    }
  }
  struct stat st {};
  if (stat(info.path.c_str(), &st) != 0) {
    *exit_code = 127;
    return Status::Error(name + ": no such program");
  }
  if (!S_ISREG(st.st_mode) || access(info.path.c_str(), X_OK) != 0) {
    *exit_code = 126;
    return Status::Error(name + ": not executable");
  }
  InspectElf(&info);
  if (info.is_static && !static_ok) {
    *exit_code = 1;
    return Status::Error(name +
                         " is statically linked; LD_PRELOAD cannot profile it "
                         "(--sampler kernel samples it from outside, or link it dynamically)");
  }
  return info;
}

}  // namespace hotline::cli

#include "record/program.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <vector>

#include "base/subprocess.h"

namespace hotline::record {
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

// What one ELF file says about itself: its program interpreter, and the imports and names that
// call for the runtime.
struct ElfFacts {
  bool is_elf = false;
  bool is_static = false;
  std::string interpreter;
  bool instrumented = false;
  bool calls_api = false;
  bool gprof = false;
};

// The API's names as the header looks them up ("hotline_rt_start", ...): string literals, in the
// read-only data of any object that includes hotline.h and calls it. Only those sections are
// searched (python3's 2 MB of them rather than its 6.8 MB file); a file without section headers
// is searched whole.
bool MentionsApi(Elf* elf, const char* raw, size_t size) {
  static constexpr char kPrefix[] = "hotline_rt_";
  auto holds = [&](size_t offset, size_t length) {
    return offset < size && memmem(raw + offset, std::min(length, size - offset), kPrefix,
                                   sizeof kPrefix - 1) != nullptr;
  };
  size_t sections = 0;
  if (elf_getshdrnum(elf, &sections) != 0 || sections == 0) return holds(0, size);
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn))) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_ALLOC) &&
        !(sh.sh_flags & (SHF_EXECINSTR | SHF_WRITE)) && holds(sh.sh_offset, sh.sh_size))
      return true;
  }
  return false;
}

ElfFacts InspectElf(const std::string& path) {
  ElfFacts facts;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return facts;
  elf_version(EV_CURRENT);
  // Mapped, not read: only the pages looked at are touched.
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (elf && elf_kind(elf) == ELF_K_ELF) {
    facts.is_elf = true;
    size_t size = 0;
    const char* raw = elf_rawfile(elf, &size);
    size_t count = 0;
    if (elf_getphdrnum(elf, &count) == 0) {
      for (size_t i = 0; i < count; ++i) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, int(i), &ph) || ph.p_type != PT_INTERP) continue;
        if (raw && ph.p_offset < size && ph.p_filesz <= size - ph.p_offset)
          facts.interpreter = std::string(raw + ph.p_offset, strnlen(raw + ph.p_offset, ph.p_filesz));
      }
    }
    GElf_Ehdr eh;
    // A shared object without PT_INTERP is still started by the dynamic loader when run.
    facts.is_static = facts.interpreter.empty() && gelf_getehdr(elf, &eh) && eh.e_type == ET_EXEC;
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
        if (std::strcmp(name, "__cyg_profile_func_enter") == 0) facts.instrumented = true;
        if (std::strcmp(name, "mcount") == 0 || std::strcmp(name, "__fentry__") == 0)
          facts.gprof = true;
      }
    }
    if (raw) facts.calls_api = MentionsApi(elf, raw, size);
  }
  if (elf) elf_end(elf);
  close(fd);
  return facts;
}

// The libraries the dynamic loader gives `path`, as it would find them (its own search: the
// program's RUNPATH, LD_LIBRARY_PATH, ld.so.cache), asked through `ld.so --list`, which maps
// them without running any of their code. Only glibc's loader is asked.
std::vector<std::string> LinkedLibraries(const std::string& path, const std::string& loader) {
  std::vector<std::string> libraries;
  std::string base = loader.substr(loader.rfind('/') + 1);
  if (base.rfind("ld-linux", 0) != 0 || !IsExecutableFile(loader)) return libraries;
  std::string listing;
  if (base::Capture({loader, "--list", path}, ".", &listing) != 0) return libraries;
  std::istringstream lines(listing);
  std::string line;
  while (std::getline(lines, line)) {
    size_t arrow = line.find("=> /");
    if (arrow == std::string::npos) continue;
    std::string library = line.substr(arrow + 3);
    library = library.substr(0, library.rfind(" ("));
    libraries.push_back(library);
  }
  return libraries;
}

}  // namespace

Expected<ProgramInfo> InspectProgram(const std::string& name, int* exit_code) {
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
  ElfFacts program = InspectElf(info.path);
  info.is_elf = program.is_elf;
  info.is_static = program.is_static;
  info.instrumented = program.instrumented;
  info.calls_api = program.calls_api;
  info.gprof = program.gprof;
  if (info.is_elf && !info.is_static) {
    for (const std::string& library : LinkedLibraries(info.path, program.interpreter)) {
      ElfFacts facts = InspectElf(library);
      info.instrumented |= facts.instrumented;
      info.calls_api |= facts.calls_api;
    }
  }
  return info;
}

}  // namespace hotline::record

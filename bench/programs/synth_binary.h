// What the synthetic-profile writers (bench/report/synth_profile.cc, bench/programs/html_synth.cc)
// share: the functions of a real binary, read from its symbol table, and the records that open a
// profile of it (the process, the binary mapped where a PIE would be).
#pragma once

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "format/schema.h"
#include "format/writer.h"

struct SynthFunction {
  std::string name;
  uint64_t address = 0, size = 0;
};

struct SynthBinary {
  std::vector<SynthFunction> functions;  // of 16 bytes or more, so a stack can point inside
  uint64_t start = 0, end = 0;           // of its loadable segments
  bool pie = false;
  uint64_t bias() const { return pie ? 0x555555554000ull : 0; }
};

inline bool ReadSynthBinary(const char* path, SynthBinary* out) {
  elf_version(EV_CURRENT);
  int fd = open(path, O_RDONLY);
  if (fd < 0) return false;
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  if (!elf) {
    close(fd);
    return false;
  }
  GElf_Ehdr ehdr;
  gelf_getehdr(elf, &ehdr);
  out->pie = ehdr.e_type == ET_DYN;
  size_t phnum = 0;
  elf_getphdrnum(elf, &phnum);
  out->start = UINT64_MAX;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD) continue;
    out->start = std::min<uint64_t>(out->start, ph.p_vaddr & ~0xfffull);
    out->end = std::max<uint64_t>(out->end, ph.p_vaddr + ph.p_memsz);
  }
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr sh;
    gelf_getshdr(scn, &sh);
    if (sh.sh_type != SHT_SYMTAB) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; ++i) {
      GElf_Sym sym;
      gelf_getsym(data, static_cast<int>(i), &sym);
      if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_size < 16 || sym.st_shndx == SHN_UNDEF)
        continue;
      out->functions.push_back(
          SynthFunction{elf_strptr(elf, sh.sh_link, sym.st_name), sym.st_value, sym.st_size});
    }
  }
  elf_end(elf);
  close(fd);
  return !out->functions.empty();
}

// Opens `out` and writes the process record (sampled every `period` ns) and the binary's
// mapping, at `time`. Returns the file's descriptor for the caller to close, or -1 (said on
// stderr) when `out` cannot be written.
inline int BeginSynthProfile(hotline::format::Writer& w, const char* out, const char* path,
                             const SynthBinary& binary, uint64_t time, uint64_t period) {
  int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    std::perror(out);
    return -1;
  }
  w.begin(fd, hotline::format::kFeatureSamples);
  hotline::format::ProcessRecord process;
  process.pid = 1000;
  process.time = time;
  process.exe = w.internString(path);
  uint64_t args[1] = {process.exe};
  process.argc = 1;
  process.argv = args;
  process.sampler = hotline::format::Sampler::kPerfTaskClock;
  process.period_ns = period;
  process.max_depth = 256;
  w.add(process);
  hotline::format::ModuleLoadRecord module;
  module.time = time;
  module.id = 1;
  module.path = w.internString(path);
  module.bias = binary.bias();
  module.start = binary.bias() + binary.start;
  module.size = binary.end - binary.start;
  w.add(module);
  return fd;
}

// Writes a .hotline profile for bench/html_scale.sh: SAMPLES samples (10 million by default) over
// exactly STACKS distinct stacks (100,000 by default) of real code addresses of BINARY, on four
// threads, so that `hotline html` meets the symbolizing, the stack trees and the sources of a
// large real profile. Stacks are random paths through the binary's functions; their samples
// follow a skewed law (a few hot stacks, a long tail), as in real programs.
//
// usage: html_synth BINARY OUT.hotline [SAMPLES] [STACKS]
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "format/schema.h"
#include "format/writer.h"

namespace {

struct Symbol {
  uint64_t address = 0, size = 0;
};

// The binary's functions (from its symbol table) and whether it is position-independent.
bool ReadFunctions(const char* path, std::vector<Symbol>* out, bool* pie, uint64_t* start,
                   uint64_t* end) {
  elf_version(EV_CURRENT);
  int fd = open(path, O_RDONLY);
  Elf* elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, nullptr) : nullptr;
  if (!elf) return false;
  GElf_Ehdr ehdr;
  gelf_getehdr(elf, &ehdr);
  *pie = ehdr.e_type == ET_DYN;
  size_t phnum = 0;
  elf_getphdrnum(elf, &phnum);
  *start = UINT64_MAX;
  *end = 0;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD) continue;
    *start = std::min<uint64_t>(*start, ph.p_vaddr & ~0xfffull);
    *end = std::max<uint64_t>(*end, ph.p_vaddr + ph.p_memsz);
  }
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr sh;
    gelf_getshdr(scn, &sh);
    if (sh.sh_type != SHT_SYMTAB) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; ++i) {
      GElf_Sym sym;
      gelf_getsym(data, static_cast<int>(i), &sym);
      if (GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_size >= 16 && sym.st_shndx != SHN_UNDEF)
        out->push_back({sym.st_value, sym.st_size});
    }
  }
  elf_end(elf);
  close(fd);
  return !out->empty();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s BINARY OUT.hotline [SAMPLES] [STACKS]\n", argv[0]);
    return 2;
  }
  const uint64_t samples = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 10'000'000;
  const uint64_t wanted = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 100'000;
  const uint64_t threads = 4, period = 1'000'000;
  std::vector<Symbol> fns;
  bool pie = false;
  uint64_t start = 0, end = 0;
  if (!ReadFunctions(argv[1], &fns, &pie, &start, &end)) {
    std::fprintf(stderr, "html_synth: %s: no functions in its symbol table\n", argv[1]);
    return 1;
  }
  const uint64_t bias = pie ? 0x555555554000ull : 0;
  int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    std::perror(argv[2]);
    return 1;
  }
  hotline::format::Writer w;
  w.begin(fd, hotline::format::kFeatureSamples);
  uint64_t t = 1'000'000'000;
  hotline::format::ProcessRecord process;
  process.pid = 1000;
  process.time = t;
  process.exe = w.internString(argv[1]);
  uint64_t args[1] = {process.exe};
  process.argc = 1;
  process.argv = args;
  process.sampler = hotline::format::Sampler::kPerfTaskClock;
  process.period_ns = period;
  process.max_depth = 256;
  w.add(process);
  hotline::format::ModuleLoadRecord module;
  module.time = t;
  module.id = 1;
  module.path = w.internString(argv[1]);
  module.bias = bias;
  module.start = bias + start;
  module.size = end - start;
  w.add(module);
  for (uint64_t tid = 0; tid < threads; ++tid)
    w.add(hotline::format::ThreadStartRecord{t, 1000 + tid, 0, 0});

  // A sparse call graph, as programs have: each function calls three others, always the same.
  std::mt19937_64 rng(4242);
  std::vector<std::vector<size_t>> callees(fns.size());
  for (auto& c : callees)
    for (int k = 0; k < 3; ++k) c.push_back(rng() % fns.size());
  // Distinct stacks: random paths down the graph from one root function, caller frames at the
  // return address of their call.
  auto pc = [&](size_t f, uint64_t salt) { return bias + fns[f].address + salt % fns[f].size; };
  std::vector<uint64_t> leaves;
  std::unordered_set<uint64_t> seen;
  while (leaves.size() < wanted) {
    uint64_t node = 0;
    size_t caller = 0, depth = 3 + rng() % 14;
    for (size_t d = 0; d < depth; ++d) {
      size_t callee = callees[caller][rng() % 3];
      node = w.internStackNode(node, pc(caller, callee * 2654435761u) + 1);
      caller = callee;
    }
    uint64_t leaf = w.internStackNode(node, pc(caller, (rng() % 16) * 4));
    if (seen.insert(leaf).second) leaves.push_back(leaf);
  }
  // Samples: stack k with a weight falling as a power of its rank.
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (uint64_t n = 0; n < samples; ++n) {
    size_t k =
        static_cast<size_t>(std::pow(uniform(rng), 3.0) * static_cast<double>(leaves.size()));
    // The first pass over the stacks gives each at least one sample.
    if (n < leaves.size()) k = n;
    t += period / threads;
    w.add(hotline::format::SampleRecord{t, 1000 + (n / 64) % threads,
                                        leaves[std::min(k, leaves.size() - 1)], 1, 0});
  }
  w.add(hotline::format::EndRecord{t, hotline::format::EndHow::kExit, 0});
  bool ok = w.flush() && !w.failed();
  close(fd);
  if (!ok) {
    std::fprintf(stderr, "html_synth: %s: %s\n", argv[2], w.error() ? w.error() : "write failed");
    return 1;
  }
  return 0;
}

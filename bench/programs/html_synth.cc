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

#include "synth_binary.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s BINARY OUT.hotline [SAMPLES] [STACKS]\n", argv[0]);
    return 2;
  }
  const uint64_t samples = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 10'000'000;
  const uint64_t wanted = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 100'000;
  const uint64_t threads = 4, period = 1'000'000;
  SynthBinary bin;
  if (!ReadSynthBinary(argv[1], &bin)) {
    std::fprintf(stderr, "html_synth: %s: no functions in its symbol table\n", argv[1]);
    return 1;
  }
  const std::vector<SynthFunction>& fns = bin.functions;
  const uint64_t bias = bin.bias();
  hotline::format::Writer w;
  uint64_t t = 1'000'000'000;
  int fd = BeginSynthProfile(w, argv[2], argv[1], bin, t, period);
  if (fd < 0) return 1;
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

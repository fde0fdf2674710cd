// Writes a .hotline profile of N samples (10 million by default) whose addresses are real code
// of a real binary: bench/report_vs_perf.sh feeds it to `hotline report -A`. Recording 10 million
// samples for real would take hours at the runtime's rate; the analyser's cost depends on the
// number of samples, distinct stacks and distinct addresses, which this reproduces.
//
// The stacks are a random walk over a random call tree of the binary's functions (from its
// symbol table), with one self-recursive function, in several interleaved threads.
//
// usage: synth_profile BINARY OUT.hotline [SAMPLES] [THREADS] [PERIOD_NS]
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "../programs/synth_binary.h"

namespace {

struct Function {
  SynthFunction symbol;
  std::vector<size_t> children;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s BINARY OUT.hotline [SAMPLES] [THREADS] [PERIOD_NS]\n", argv[0]);
    return 2;
  }
  const uint64_t samples = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 10'000'000;
  const uint64_t threads = argc > 4 ? std::max(1ull, std::strtoull(argv[4], nullptr, 10)) : 2;
  const uint64_t period = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 50'000;
  SynthBinary bin;
  if (!ReadSynthBinary(argv[1], &bin)) {
    std::fprintf(stderr, "synth_profile: %s: no functions in its symbol table\n", argv[1]);
    return 1;
  }
  std::mt19937_64 rng(12345);
  // A random call tree: each function but the root gets a parent among those before it.
  std::vector<Function> fns;
  for (const SynthFunction& f : bin.functions) fns.push_back(Function{f, {}});
  auto root_it = std::find_if(fns.begin(), fns.end(),
                              [](const Function& f) { return f.symbol.name == "main"; });
  if (root_it != fns.end()) std::iter_swap(fns.begin(), root_it);
  std::shuffle(fns.begin() + 1, fns.end(), rng);
  for (size_t i = 1; i < fns.size(); ++i)
    fns[rng() % std::min<size_t>(i, 8 + i / 2)].children.push_back(i);
  const size_t recursive = fns.size() > 2 ? 1 + rng() % (fns.size() - 1) : 0;
  fns[recursive].children.push_back(recursive);

  const uint64_t bias = bin.bias();
  auto ip = [&](size_t f, uint64_t salt) {
    return bias + fns[f].symbol.address + (salt % fns[f].symbol.size);
  };

  hotline::format::Writer w;
  uint64_t t = 1'000'000'000;
  int fd = BeginSynthProfile(w, argv[2], argv[1], bin, t, period);
  if (fd < 0) return 1;

  // Per thread: the functions on the stack and the trie node of each caller frame.
  struct Walk {
    std::vector<size_t> functions{0};
    std::vector<uint64_t> nodes;  // nodes[i] = frame of functions[i] calling functions[i + 1]
  };
  std::vector<Walk> walks(threads);
  for (uint64_t tid = 0; tid < threads; ++tid)
    w.add(hotline::format::ThreadStartRecord{t, 1000 + tid, 0, 0});
  for (uint64_t n = 0; n < samples; ++n) {
    uint64_t thread = (n / 64) % threads;  // threads take turns in runs, as writers flush them
    Walk& walk = walks[thread];
    uint64_t r = rng();
    size_t top = walk.functions.back();
    if (r % 10 < 3 && walk.functions.size() > 1) {
      walk.functions.pop_back();
      walk.nodes.pop_back();
    } else if (r % 10 < 6 && !fns[top].children.empty() && walk.functions.size() < 48) {
      size_t child = fns[top].children[(r >> 8) % fns[top].children.size()];
      uint64_t parent = walk.nodes.empty() ? 0 : walk.nodes.back();
      // The return address of the call site: fixed per (caller, callee).
      walk.nodes.push_back(w.internStackNode(parent, ip(top, child * 2654435761u) + 1));
      walk.functions.push_back(child);
    }
    uint64_t caller = walk.nodes.empty() ? 0 : walk.nodes.back();
    uint64_t leaf = w.internStackNode(caller, ip(walk.functions.back(), ((r >> 16) % 8) * 8));
    t += period;
    w.add(hotline::format::SampleRecord{t, 1000 + thread, leaf, 1, 0});
  }
  w.add(hotline::format::EndRecord{t, hotline::format::EndHow::kExit, 0});
  bool ok = w.flush() && !w.failed();
  close(fd);
  if (!ok) {
    std::fprintf(stderr, "synth_profile: %s: %s\n", argv[2],
                 w.error() ? w.error() : "write failed");
    return 1;
  }
  return 0;
}

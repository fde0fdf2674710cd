// End to end for the in-process DWARF unwinder: programs whose call-frame information lives only
// in .debug_frame must unwind to main (and, where their unwind information is right, to _start),
// and a stack no unwinder can continue must be flagged broken.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "format/raw_profile.h"
#include "format/schema.h"
#include "harness.h"

namespace hotline {
namespace {

using testing::Execute;
using testing::Hotline;
using testing::Load;
using testing::ScratchDir;

// The program's defined code symbols from nm, sorted by link-time address; each runs to the next.
class Symbols {
 public:
  explicit Symbols(const std::string& program) {
    auto r = Execute({"/usr/bin/nm", "--defined-only", program}, ScratchDir("nm"));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::istringstream in(r.out);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string address, type, name;
      if (!(fields >> address >> type >> name) || (type != "T" && type != "t")) continue;
      symbols_.emplace_back(std::strtoull(address.c_str(), nullptr, 16), name);
    }
    std::sort(symbols_.begin(), symbols_.end());
  }

  // True when the function holding link-time address `address` is called `name` (one of the
  // names at its start: fpc gives main two).
  bool Is(uint64_t address, const std::string& name) const {
    auto after = std::upper_bound(symbols_.begin(), symbols_.end(),
                                  std::make_pair(address, std::string("\xff")));
    if (after == symbols_.begin()) return false;
    uint64_t start = std::prev(after)->first;
    for (auto it = std::prev(after);; --it) {
      if (it->first != start) break;
      if (it->second == name) return true;
      if (it == symbols_.begin()) break;
    }
    return false;
  }

 private:
  std::vector<std::pair<uint64_t, std::string>> symbols_;
};

struct Walks {
  uint64_t in_leaf = 0;   // samples whose innermost frame is in the leaf function
  uint64_t to_main = 0;   // ... whose stack holds main and is at least 4 frames deep
  uint64_t to_start = 0;  // ... whose outermost frame is in _start
  uint64_t broken = 0;    // ... flagged broken
};

Walks Examine(const std::string& program, const std::string& leaf,
              const std::vector<std::string>& mains, const std::string& sampler = "auto") {
  std::string dir = ScratchDir("unwind");
  std::string profile = dir + "/p.hotline";
  auto run = Hotline({"record", "-q", "--sampler", sampler, "-o", profile, "--", program}, dir);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  format::RawProfile p = Load(profile);
  Symbols symbols(program);
  Walks w;
  for (const format::SampleRecord& s : p.samples) {
    std::vector<uint64_t> frames = p.stack(s.node);
    if (frames.empty()) continue;
    const format::RawModule* exe = p.moduleAt(frames[0], s.time);
    if (!exe || exe->path != program || !symbols.Is(frames[0] - exe->bias, leaf)) continue;
    auto in_exe = [&](uint64_t address, const std::string& name) {
      return address >= exe->start && address - exe->start < exe->size &&
             symbols.Is(address - exe->bias, name);
    };
    w.in_leaf += s.weight;
    bool main = false;
    for (uint64_t f : frames)
      for (const std::string& name : mains) main = main || in_exe(f, name);
    if (main && frames.size() >= 4) w.to_main += s.weight;
    if (in_exe(frames.back(), "_start")) w.to_start += s.weight;
    if (s.flags & format::kSampleBroken) w.broken += s.weight;
  }
  return w;
}

TEST(Unwind, CChainWithOnlyDebugFrameReachesStart) {
  Walks w = Examine(PROGRAM_debug_frame_chain, "inner", {"main"});
  ASSERT_GE(w.in_leaf, 100u);
  EXPECT_GE(double(w.to_main), 0.9 * double(w.in_leaf)) << w.to_main << " of " << w.in_leaf;
  EXPECT_GE(double(w.to_start), 0.9 * double(w.in_leaf)) << w.to_start << " of " << w.in_leaf;
  EXPECT_LE(double(w.broken), 0.1 * double(w.in_leaf)) << w.broken << " of " << w.in_leaf;
}

// fpc's own start-up code (FPC_SysEntry) carries FDEs without the rules for how it moves the
// stack pointer, so a walk cannot go on above main and those stacks are rightly broken; what
// the .debug_frame rows must give is the chain up to main.
TEST(Unwind, PascalChainWithOnlyDebugFrameReachesMain) {
  std::string program = PROGRAM_debug_frame_chain_pas;
  if (program.empty()) GTEST_SKIP() << "fpc not found";
  // fpc 3.2 writes 8-byte CIE pointers into 32-bit .debug_frame entries: the runtime's decoder
  // reads them for the signal sampler, a standardised copy of the file for the kernel's.
  for (const char* sampler : {"kernel", "signal"}) {
    Walks w = Examine(program, "P$DEBUG_FRAME_CHAIN_$$_INNER$QWORD$$QWORD", {"main", "PASCALMAIN"},
                      sampler);
    ASSERT_GE(w.in_leaf, 100u) << sampler;
    EXPECT_GE(double(w.to_main), 0.9 * double(w.in_leaf))
        << sampler << ": " << w.to_main << " of " << w.in_leaf;
  }
}

TEST(Unwind, StackWithoutUnwindInformationIsBroken) {
  Walks w = Examine(PROGRAM_no_cfi, "spin_without_cfi", {"main"});
  ASSERT_GE(w.in_leaf, 100u);
  EXPECT_GE(double(w.broken), 0.9 * double(w.in_leaf)) << w.broken << " of " << w.in_leaf;
}

}  // namespace
}  // namespace hotline

// Timed tracing through the model: a function that spins a known elapsed time per call must show
// that time as its average (within 20%), its calls exactly, min ≤ avg ≤ max, and the profile
// must satisfy every invariant (sampled and traced sums alike) in counts and timed mode.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "harness.h"
#include "model/build.h"
#include "model/invariants.h"
#include "symbolize/symbolizer.h"
#include "../../symbol_cache_off.h"

namespace hotline {
namespace {

using testing::Hotline;
using testing::RunResult;
using testing::ScratchDir;

constexpr uint64_t kCalls = 25;
constexpr double kSpinNs = 2e6;

model::Profile RecordAndBuild(const std::string& mode) {
  std::string dir = ScratchDir("spin-" + mode);
  std::string path = dir + "/spin.hotline";
  RunResult r = Hotline(
      {"record", "-q", "--trace=" + mode, "-o", path, "--", PROGRAM_spin, std::to_string(kCalls)},
      dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  symbolize::Symbolizer symbolizer;
  model::SymbolizerResolver resolver(symbolizer);
  model::BuildOptions build;
  format::ReadStats stats;
  Expected<model::Profile> p = model::LoadProfile(path, resolver, build, &stats);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? std::move(*p) : model::Profile();
}

const model::Function* Find(const model::Profile& p, const std::string& name) {
  for (const model::Function& f : p.functions)
    if (f.name == name) return &f;
  return nullptr;
}

// The exact calls of the call-graph edge caller → callee (0 when there is none).
uint64_t EdgeCalls(const model::Profile& p, const std::string& caller, const std::string& callee) {
  for (size_t i = 0; i < p.functions.size() && i < p.callees.size(); ++i) {
    if (p.functions[i].name != caller) continue;
    for (const model::CallEdge& e : p.callees[i])
      if (p.functions[e.child.index()].name == callee) return e.calls;
  }
  return 0;
}

TEST(TraceTimed, SpinningFunctionHasItsKnownAverageAndTheSumsHold) {
  model::Profile p = RecordAndBuild("timed");
  ASSERT_TRUE(p.summary.trace_timed);
  // main → outer → spin: depth 3 with main instrumented too.
  EXPECT_EQ(p.summary.max_call_depth, 3u);
  EXPECT_EQ(EdgeCalls(p, "main", "outer"), 1u);
  EXPECT_EQ(EdgeCalls(p, "outer", "spin"), kCalls);
  Status invariants = model::CheckInvariants(p);
  EXPECT_TRUE(invariants.ok()) << invariants.message();
  const model::Function* spin = Find(p, "spin");
  const model::Function* outer = Find(p, "outer");
  ASSERT_NE(spin, nullptr);
  ASSERT_NE(outer, nullptr);
  EXPECT_TRUE(spin->calls_exact);
  EXPECT_EQ(spin->calls, kCalls);
  EXPECT_EQ(outer->calls, 1u);
  ASSERT_TRUE(spin->timed);
  // Each call spins 2 ms of elapsed time; a call the scheduler preempts (the suite runs tests
  // side by side on two CPUs) lasts longer, but the quickest is the spin alone.
  double avg = static_cast<double>(spin->traced_call_sum_ns) / static_cast<double>(kCalls);
  EXPECT_NEAR(double(spin->traced_min_ns), kSpinNs, 0.2 * kSpinNs);
  EXPECT_GE(avg, 0.98 * kSpinNs);
  EXPECT_LE(spin->traced_min_ns, static_cast<uint64_t>(avg));
  EXPECT_GE(spin->traced_max_ns, static_cast<uint64_t>(avg));
  // spin calls nothing traced: its self time is its inclusive time; outer's inclusive time
  // holds all of spin's, and outer's self time is the little loop around it.
  EXPECT_EQ(spin->traced_self_ns, spin->traced_inclusive_ns);
  EXPECT_GE(outer->traced_inclusive_ns, spin->traced_inclusive_ns);
  EXPECT_EQ(outer->traced_self_ns, outer->traced_inclusive_ns - spin->traced_inclusive_ns);
  EXPECT_LT(outer->traced_self_ns, outer->traced_inclusive_ns / 10);
}

TEST(TraceCounts, CountsModeHasExactCallsAndNoTracedTimes) {
  model::Profile p = RecordAndBuild("counts");
  EXPECT_TRUE(p.summary.traced);
  EXPECT_FALSE(p.summary.trace_timed);
  Status invariants = model::CheckInvariants(p);
  EXPECT_TRUE(invariants.ok()) << invariants.message();
  const model::Function* spin = Find(p, "spin");
  ASSERT_NE(spin, nullptr);
  EXPECT_EQ(spin->calls, kCalls);
  EXPECT_FALSE(spin->timed);
  // The callers, found from the call sites, are the same as timed mode's.
  EXPECT_EQ(EdgeCalls(p, "main", "outer"), 1u);
  EXPECT_EQ(EdgeCalls(p, "outer", "spin"), kCalls);
  EXPECT_EQ(EdgeCalls(p, "main", "spin"), 0u);
  // Counts mode keeps no stack: the deepest one is not known.
  EXPECT_EQ(p.summary.max_call_depth, 0u);
}

// -P's per-call times are elapsed time, every other table's sampled CPU time: the titles say
// which, and --sampled-times gives -P the CPU time. A function that sleeps as long as another
// spins has as much elapsed time and no CPU time.
double TotalNs(const std::string& table, const std::string& function) {
  std::istringstream rows(table);
  for (std::string row; std::getline(rows, row);) {
    std::vector<std::string> cells;
    std::istringstream fields(row);
    for (std::string cell; std::getline(fields, cell, '\t');) cells.push_back(cell);
    if (cells.size() == 9 && cells[8] == function) return std::stod(cells[1]);
  }
  return -1;
}

TEST(TraceTimed, ProceduresSayWhichClockAndOfferTheOther) {
  std::string dir = ScratchDir("nap");
  std::string path = dir + "/nap.hotline";
  RunResult r = Hotline({"record", "-q", "--trace=timed", "-o", path, "--", PROGRAM_nap}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  RunResult elapsed = Hotline({"report", "-P", "-m", path}, dir);
  // Elapsed time: each took at least its 150 ms, the sleep as much as the spin (however busy
  // the machine, neither can take less). 1% is left for the tracer's ticks, which are converted
  // to nanoseconds at a measured rate.
  EXPECT_GE(TotalNs(elapsed.out, "napper"), 148.5e6) << elapsed.out;
  EXPECT_GE(TotalNs(elapsed.out, "spinner"), 148.5e6) << elapsed.out;
  RunResult cpu = Hotline({"report", "-P", "-m", "--sampled-times", path}, dir);
  EXPECT_LT(TotalNs(cpu.out, "napper"), 0.1 * TotalNs(cpu.out, "spinner")) << cpu.out;
  RunResult titles = Hotline({"report", "-P", "-C", "-N", path}, dir);
  EXPECT_NE(titles.out.find("Procedures (elapsed time of every call"), std::string::npos)
      << titles.out;
  EXPECT_NE(titles.out.find("Functions by self time (CPU time, sampled)"), std::string::npos)
      << titles.out;
}

}  // namespace
}  // namespace hotline

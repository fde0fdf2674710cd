// analysis::Compare on hand-made runs: empty for a run against itself, a 20% slowdown found
// among 30 noisy functions and nothing else flagged, no verdict from a 0% change, one run per
// side judged by its samples, [unsampled] time listed but not judged.
#include "analysis/diff.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>

namespace hotline::analysis {
namespace {

// A run whose functions spent the given self (= inclusive) times, sampled every 1 ms.
RunSummary MakeRun(const std::map<std::string, double>& ms) {
  RunSummary r;
  r.period_ns = 1'000'000;
  for (const auto& [name, t] : ms) {
    FunctionCost f;
    f.name = name;
    f.self_ns = f.inclusive_ns = static_cast<uint64_t>(t * 1e6);
    r.total_ns += f.self_ns;
    r.functions.push_back(f);
  }
  return r;
}

// Five runs: slow_path at `slow_ms`, and 30 other functions at 20 ms each; every function's
// time varies from run to run by up to ±`noise` (a fraction).
std::vector<RunSummary> Runs(double slow_ms, double noise, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> jitter(1 - noise, 1 + noise);
  std::vector<RunSummary> runs;
  for (int r = 0; r < 5; ++r) {
    std::map<std::string, double> ms = {{"slow_path", slow_ms * jitter(random)}};
    for (int f = 0; f < 30; ++f) ms["other_" + std::to_string(f)] = 20 * jitter(random);
    runs.push_back(MakeRun(ms));
  }
  return runs;
}

std::vector<const RunSummary*> Pointers(const std::vector<RunSummary>& runs) {
  std::vector<const RunSummary*> p;
  for (const RunSummary& r : runs) p.push_back(&r);
  return p;
}

std::vector<std::string> Flagged(const DiffTable& table, Verdict verdict) {
  std::vector<std::string> names;
  for (const DiffRow& row : table.rows)
    if (row.verdict == verdict) names.push_back(row.name);
  return names;
}

TEST(Diff, ARunAgainstItselfIsEmpty) {
  std::vector<RunSummary> runs = Runs(100, 0.05, 1);
  Diff d = Compare(Pointers(runs), Pointers(runs));
  EXPECT_TRUE(d.self.rows.empty());
  EXPECT_TRUE(d.inclusive.rows.empty());
  EXPECT_TRUE(d.lines.rows.empty());
}

// The defaults (95% for the table, changes of 5% or more): over many draws of the noise, a 20%
// slowdown among 30 noisy functions is found nearly always and nothing else is flagged; a 0%
// change is almost never called slower.
TEST(Diff, ATwentyPercentSlowdownIsFoundAndTheNoiseIsNot) {
  int found = 0, wrong = 0, zero_flagged = 0;
  constexpr int kDraws = 400;
  for (uint64_t seed = 1; seed <= kDraws; ++seed) {
    std::vector<RunSummary> base = Runs(100, 0.05, seed), next = Runs(120, 0.05, seed + 1000);
    Diff d = Compare(Pointers(base), Pointers(next));
    EXPECT_EQ(d.self.compared, 31u);
    std::vector<std::string> slower = Flagged(d.self, Verdict::kSlower);
    int slow_path = static_cast<int>(std::count(slower.begin(), slower.end(), "slow_path"));
    found += slow_path;
    wrong += static_cast<int>(slower.size()) - slow_path +
             static_cast<int>(Flagged(d.self, Verdict::kFaster).size());
    std::vector<RunSummary> same = Runs(100, 0.05, seed + 2000);
    zero_flagged +=
        !Flagged(Compare(Pointers(base), Pointers(same)).self, Verdict::kSlower).empty();
  }
  std::printf(
      "20%% slowdown found in %d of %d draws; %d other verdicts; 0%% change called "
      "slower in %d\n",
      found, kDraws, wrong, zero_flagged);
  EXPECT_GE(found, kDraws * 95 / 100);
  EXPECT_LE(wrong, kDraws / 50);
  EXPECT_LE(zero_flagged, kDraws / 50);
}

// Without a threshold the verdicts are as sure as the confidence says: over many draws of the
// noise, a table wrongly claims a change about 5% of the time at 95% (nominal; the intervals
// are approximate), and finds a real 20% almost always.
TEST(Diff, VerdictsAreCalibrated) {
  DiffOptions exact;
  exact.threshold = 0;
  int false_alarms = 0, found = 0;
  constexpr int kDraws = 400;
  for (uint64_t seed = 1; seed <= kDraws; ++seed) {
    std::vector<RunSummary> same = Runs(100, 0.05, seed), also = Runs(100, 0.05, seed + 5000);
    Diff d = Compare(Pointers(same), Pointers(also), exact);
    false_alarms +=
        !Flagged(d.self, Verdict::kSlower).empty() || !Flagged(d.self, Verdict::kFaster).empty();
    std::vector<RunSummary> slower = Runs(120, 0.05, seed + 9000);
    found += Flagged(Compare(Pointers(same), Pointers(slower), exact).self, Verdict::kSlower) ==
             std::vector<std::string>{"slow_path"};
  }
  EXPECT_LE(false_alarms, kDraws / 10) << "tables wrongly claiming a change";
  EXPECT_GE(found, kDraws * 85 / 100);
}

// Three runs of a program whose speed drifts from run to run by up to ±`drift` (a busy machine:
// every function of a run a little slower or faster together), 30 functions of 20 ms each
// `scale`d, each with ±2% of noise of its own.
std::vector<RunSummary> ThreeRuns(double scale, double drift, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> run_speed(1 - drift, 1 + drift), own(0.98, 1.02);
  std::vector<RunSummary> runs;
  for (int r = 0; r < 3; ++r) {
    double speed = run_speed(random);
    std::map<std::string, double> ms;
    for (int f = 0; f < 30; ++f) ms["f" + std::to_string(f)] = 20 * scale * speed * own(random);
    runs.push_back(MakeRun(ms));
  }
  return runs;
}

// The total, as diff and check both judge it: three runs a side, the machine's speed drifting by
// ±7% (the runs of a +30% change overlap no more than 2.48–2.81 s against 3.21–3.67 s do).
// Over many draws a 30% slowdown is found nearly always and equal runs are almost never called
// slower or faster.
TEST(Diff, TheTotalOfThreeRunsASideIsCalibrated) {
  int found = 0, false_alarms = 0;
  constexpr int kDraws = 1000;
  for (uint64_t seed = 1; seed <= kDraws; ++seed) {
    std::vector<RunSummary> base = ThreeRuns(1.0, 0.07, seed);
    std::vector<RunSummary> slower = ThreeRuns(1.3, 0.07, seed + 100000);
    std::vector<RunSummary> same = ThreeRuns(1.0, 0.07, seed + 200000);
    Diff d = Compare(Pointers(base), Pointers(slower));
    ASSERT_TRUE(d.from_runs && d.total.judged);
    found += d.total.verdict == Verdict::kSlower;
    false_alarms += Compare(Pointers(base), Pointers(same)).total.verdict != Verdict::kNoChange;
  }
  std::printf("+30%% total found in %d of %d draws; equal runs called changed in %d\n", found,
              kDraws, false_alarms);
  EXPECT_GE(found, kDraws * 95 / 100);
  EXPECT_LE(false_alarms, kDraws * 2 / 100);
}

TEST(Diff, OneRunPerSideIsJudgedByItsSamples) {
  RunSummary base = MakeRun({{"grows", 1000}, {"wobbles", 100}, {"goes", 5}});
  RunSummary next = MakeRun({{"grows", 1500}, {"wobbles", 105}, {"arrives", 5}});
  Diff d = Compare({&base}, {&next});
  EXPECT_FALSE(d.from_runs);
  EXPECT_EQ(Flagged(d.self, Verdict::kSlower), std::vector<std::string>{"grows"});
  EXPECT_EQ(Flagged(d.self, Verdict::kNoChange), std::vector<std::string>{"wobbles"});
  EXPECT_EQ(Flagged(d.self, Verdict::kNew), std::vector<std::string>{"arrives"});
  EXPECT_EQ(Flagged(d.self, Verdict::kGone), std::vector<std::string>{"goes"});
  // The total from its samples: 1105 against 1610.
  EXPECT_TRUE(d.total.judged);
  EXPECT_EQ(d.total.verdict, Verdict::kSlower);
  // Largest change first.
  EXPECT_EQ(d.self.rows.front().name, "grows");
  EXPECT_NEAR(d.self.rows.front().new_share, 100.0 * 1500 / 1610, 1e-9);
}

// A loaded machine's kernel drops samples from a full ring: their time becomes [unsampled]
// (one run in five here loses 150 ms) and the functions' shares shrink. That row is listed, but
// judged neither slower nor as one of the compared rows.
TEST(Diff, UnsampledTimeIsListedButNotJudged) {
  std::vector<RunSummary> base = Runs(100, 0.02, 7), next = Runs(100, 0.02, 8);
  for (size_t r = 0; r < base.size(); ++r) {
    for (RunSummary* run : {&base[r], &next[r]}) {
      FunctionCost f;
      f.name = f.file = f.module = model::kUnsampledName;
      f.self_ns = f.inclusive_ns = run == &next[0] ? 150'000'000 : 700'000;
      run->total_ns += f.self_ns;
      run->functions.push_back(f);
    }
  }
  Diff d = Compare(Pointers(base), Pointers(next));
  EXPECT_EQ(d.self.compared, 31u);
  auto row = std::find_if(d.self.rows.begin(), d.self.rows.end(),
                          [](const DiffRow& r) { return r.name == model::kUnsampledName; });
  ASSERT_NE(row, d.self.rows.end());
  EXPECT_FALSE(row->judged);
  EXPECT_EQ(row->verdict, Verdict::kNoChange);
  EXPECT_TRUE(Flagged(d.self, Verdict::kSlower).empty());
}

}  // namespace
}  // namespace hotline::analysis

// End to end: real programs recorded with `hotline record` and reported with `hotline report -m`,
// checked against what the programs are known to do. Every profile is also built in-process and
// put through the model's invariant checker.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <vector>

#include "model/build.h"
#include "model/invariants.h"
#include "symbolize/symbolizer.h"
#include "test_util.h"
#include "../../symbol_cache_off.h"

namespace hotline {
namespace {

using testing::RunResult;
using testing::RunShell;

struct FlatRow {
  double percent = 0;
  uint64_t self_ns = 0, inclusive_ns = 0, calls = 0;
};

// Records `program args` with `hotline record` and returns the profile's path (fails the test if
// recording fails).
std::string Record(const std::string& name, const std::string& program, const std::string& args) {
  std::string dir = testing::ScratchDir("e2e-" + name);
  std::string profile = dir + "/" + name + ".hotline";
  std::string command =
      std::string(HOTLINE_BIN) + " record -o '" + profile + "' -- '" + program + "' " + args;
  RunResult r = RunShell(command);
  EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.err;
  return profile;
}

// `hotline report -C -m`: percent, self_ns, inclusive_ns, calls, self_per_call_ns, name.
std::map<std::string, FlatRow> Flat(const std::string& profile, uint64_t* total) {
  RunResult r = RunShell(std::string(HOTLINE_BIN) + " report -C -m '" + profile + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, FlatRow> rows;
  *total = 0;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    FlatRow row;
    std::string calls, per_call;  // "~3": sampled counts are estimates, and say so
    std::string name;
    fields >> row.percent >> row.self_ns >> row.inclusive_ns >> calls >> per_call;
    row.calls = std::strtoull(calls.c_str() + (calls[0] == '~'), nullptr, 10);
    std::getline(fields >> std::ws, name);
    // Every function with time is listed (-C has no default cutoff). The shares are of the
    // sampled time: [unsampled], the CPU time no sample reached, grows on a busy machine.
    if (name != "[unsampled]") *total += row.self_ns;
    rows[name] = row;
  }
  return rows;
}

void ExpectInvariants(const std::string& path) {
  symbolize::Symbolizer symbolizer;
  model::SymbolizerResolver resolver(symbolizer);
  format::ReadStats stats;
  Expected<model::Profile> profile = model::LoadProfile(path, resolver, {}, &stats);
  ASSERT_TRUE(profile.ok()) << profile.status().message();
  EXPECT_FALSE(stats.damaged()) << stats.summary();
  Status invariants = model::CheckInvariants(*profile);
  EXPECT_TRUE(invariants.ok()) << invariants.message();
}

double Share(const std::map<std::string, FlatRow>& rows, const std::string& name, uint64_t total) {
  auto it = rows.find(name);
  if (it == rows.end() || total == 0) {
    ADD_FAILURE() << name << " is not in the report";
    return 0;
  }
  return 100.0 * static_cast<double>(it->second.inclusive_ns) / static_cast<double>(total);
}

TEST(ReportEndToEnd, ThreeFunctionsAtSixtyThirtyTen) {
  std::string profile = Record("shares", HOTLINE_PROGRAM_shares, "1500");
  uint64_t total = 0;
  auto rows = Flat(profile, &total);
  ASSERT_GT(total, 1'000'000'000u);  // about 1.5 s of CPU
  double sixty = Share(rows, "sixty", total), thirty = Share(rows, "thirty", total),
         ten = Share(rows, "ten", total);
  RecordProperty("shares",
                 std::to_string(sixty) + " " + std::to_string(thirty) + " " + std::to_string(ten));
  EXPECT_NEAR(sixty, 60.0, 3.0);
  EXPECT_NEAR(thirty, 30.0, 3.0);
  EXPECT_NEAR(ten, 10.0, 3.0);
  ExpectInvariants(profile);
}

TEST(ReportEndToEnd, DeepRecursionStaysAtMostHundredPercent) {
  std::string profile = Record("recursive", HOTLINE_PROGRAM_recursive, "300");
  uint64_t total = 0;
  auto rows = Flat(profile, &total);
  ASSERT_GT(total, 0u);
  ASSERT_TRUE(rows.count("depth"));
  const FlatRow& depth = rows["depth"];
  EXPECT_LE(depth.inclusive_ns, total);
  // Nearly all the run is inside depth(), so nearly all of it is its inclusive time.
  EXPECT_GT(100.0 * static_cast<double>(depth.inclusive_ns) / static_cast<double>(total), 90.0);
  EXPECT_LE(depth.percent, 100.0);
  // The call graph's depth→depth edge is all loop: its time rows still add up (checked below),
  // and its section starts at no more than 100%.
  RunResult graph = RunShell(std::string(HOTLINE_BIN) + " report -G -m '" + profile + "'");
  std::istringstream in(graph.out);
  bool saw_section = false;
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("function\t") || !line.ends_with("\tdepth")) continue;
    std::istringstream fields(line.substr(9));
    uint64_t inclusive, loop;
    double percent;
    fields >> inclusive >> loop >> percent;
    EXPECT_LE(percent, 100.0) << line;
    saw_section = true;
  }
  EXPECT_TRUE(saw_section) << graph.out;
  ExpectInvariants(profile);
}

// Two lambdas on one line and run<> over each: functions are told apart by what tells them
// apart in the binary (the symbol at an out-of-line entry, the lambda's own place), and named
// so a reader can too. perf shows run<main::{lambda(int)#1}> and #2 at 20% and 80%.
TEST(ReportEndToEnd, LambdasAndTheirInstantiationsAreFunctionsOfTheirOwn) {
  std::string profile = Record("lambdas", HOTLINE_PROGRAM_lambdas, "20000000");
  uint64_t total = 0;
  auto rows = Flat(profile, &total);
  ASSERT_GT(total, 0u);
  std::vector<std::pair<std::string, FlatRow>> lambdas, runs;
  for (const auto& [name, row] : rows) {
    if (name.find("{lambda at lambdas.cc:") != std::string::npos) lambdas.emplace_back(name, row);
    if (name.starts_with("void run<main::{lambda(int)#")) runs.emplace_back(name, row);
  }
  ASSERT_EQ(lambdas.size(), 2u) << "lambdas merged or unnamed";
  ASSERT_EQ(runs.size(), 2u) << "instantiations merged";
  auto share = [&](const FlatRow& row) {
    return 100.0 * static_cast<double>(row.inclusive_ns) / static_cast<double>(total);
  };
  // 20% and 80% of the work: what the test asks is which function has which share, so the
  // bounds are wide enough for a busy machine (the light one read 29% beside another test).
  double a = share(lambdas[0].second), b = share(lambdas[1].second);
  EXPECT_LT(std::min(a, b), 40.0) << lambdas[0].first << " " << lambdas[1].first;
  EXPECT_GT(std::max(a, b), 60.0);
  // #1 is the first lambda (the light one), #2 the second.
  const FlatRow& first =
      runs[0].first.find("#1") != std::string::npos ? runs[0].second : runs[1].second;
  const FlatRow& second =
      runs[0].first.find("#2") != std::string::npos ? runs[0].second : runs[1].second;
  EXPECT_LT(share(first), 40.0);
  EXPECT_GT(share(second), 60.0);
  ExpectInvariants(profile);
}

}  // namespace
}  // namespace hotline

// Exact call counts from -finstrument-functions tracing, equal (not approximately) to numbers
// known in advance, in counts and timed mode; and the same counts as gprof's.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace hotline {
namespace {

using testing::Execute;
using testing::Hotline;
using testing::Load;
using testing::ProfilesIn;
using testing::RunResult;
using testing::ScratchDir;

// `hotline report -M -m`: function name → calls.
std::map<std::string, uint64_t> Calls(const std::string& profile, const std::string& dir) {
  RunResult r = Hotline({"report", "-M", "-m", "-p0", profile}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, uint64_t> calls;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string file, lineno, count, self, cumulative, name;
    std::getline(fields, file, '\t');
    std::getline(fields, lineno, '\t');
    std::getline(fields, count, '\t');
    std::getline(fields, self, '\t');
    std::getline(fields, cumulative, '\t');
    std::getline(fields, name);
    calls[name] = std::strtoull(count.c_str(), nullptr, 10);
  }
  return calls;
}

// The exact calls of each call-graph edge into `callee`, by caller name, from `hotline export
// --format json` (its call_graph: report -G shows only functions that were sampled). Only
// traced callers: an edge from untraced code has sampled calls, not exact ones.
std::map<std::string, uint64_t> Callers(const std::string& profile, const std::string& callee) {
  std::string dir = ScratchDir("callers");
  std::string json = dir + "/graph.json";
  RunResult e = Hotline({"export", "--format", "json", profile, "-o", json}, dir);
  EXPECT_EQ(e.exit_code, 0) << e.err;
  const char* edges =
      "import json, sys\n"
      "d = json.load(open(sys.argv[1]))\n"
      "names = [f['name'] for f in d['functions']]\n"
      "for e in d['call_graph']:\n"
      "    if d['functions'][e['caller']]['calls_exact']:\n"
      "        print(names[e['caller']], names[e['callee']], e['calls'], sep='\\t')\n";
  RunResult r = Execute({"/usr/bin/python3", "-c", edges, json}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, uint64_t> callers;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string x; std::getline(fields, x, '\t');) f.push_back(x);
    uint64_t calls = f.size() == 3 ? std::strtoull(f[2].c_str(), nullptr, 10) : 0;
    if (f.size() == 3 && f[1] == callee && calls > 0) callers[f[0]] += calls;
  }
  return callers;
}

uint64_t Stat(const format::RawProfile& p, const std::string& key) {
  for (const auto& [k, v] : p.stats)
    if (k == key) return v;
  ADD_FAILURE() << "no STATS " << key;
  return 0;
}

std::string Record(const std::string& name, const std::vector<std::string>& command,
                   const std::string& mode = "counts") {
  std::string dir = ScratchDir(name);
  std::string profile = dir + "/" + name + ".hotline";
  std::vector<std::string> args = {"record", "-q", "--trace=" + mode, "-o", profile, "--"};
  args.insert(args.end(), command.begin(), command.end());
  RunResult r = Hotline(args, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return profile;
}

class TraceModes : public ::testing::TestWithParam<std::string> {};

TEST_P(TraceModes, FibCallsItselfTwiceFibOfNPlusOneMinusOneTimes) {
  std::string profile = Record("fib", {PROGRAM_trace_fib, "20"}, GetParam());
  auto calls = Calls(profile, ScratchDir("fib-report"));
  EXPECT_EQ(calls["fib"], 2u * 10946 - 1);  // fib(21) = 10946
  EXPECT_EQ(calls["main"], 1u);
  EXPECT_EQ(Callers(profile, "fib"),
            (std::map<std::string, uint64_t>{{"main", 1}, {"fib", 2u * 10946 - 2}}));
  EXPECT_EQ(Stat(Load(profile), "trace_unmatched_exits"), 0u);
}

TEST_P(TraceModes, MutualRecursion) {
  std::string profile = Record("mutual", {PROGRAM_trace_mutual}, GetParam());
  auto calls = Calls(profile, ScratchDir("m"));
  EXPECT_EQ(calls["is_even"], 501u);
  EXPECT_EQ(calls["is_odd"], 500u);
  EXPECT_EQ(Callers(profile, "is_even"),
            (std::map<std::string, uint64_t>{{"main", 1}, {"is_odd", 500}}));
  EXPECT_EQ(Callers(profile, "is_odd"), (std::map<std::string, uint64_t>{{"is_even", 500}}));
}

TEST_P(TraceModes, ExceptionsThroughThreeFramesKeepTheStreamBalanced) {
  std::string profile = Record("throw", {PROGRAM_trace_throw}, GetParam());
  auto calls = Calls(profile, ScratchDir("t"));
  EXPECT_EQ(calls["level1(int)"], 100u);
  EXPECT_EQ(calls["level2(int)"], 100u);
  EXPECT_EQ(calls["level3(int)"], 100u);
  EXPECT_EQ(calls["after()"], 100u);
  EXPECT_EQ(Callers(profile, "level3(int)"),
            (std::map<std::string, uint64_t>{{"level2(int)", 100}}));
  EXPECT_EQ(Callers(profile, "after()"), (std::map<std::string, uint64_t>{{"main", 100}}));
  EXPECT_EQ(Stat(Load(profile), "trace_unmatched_exits"), 0u);
}

TEST_P(TraceModes, AnInlinedFunctionIsCalledFromTheFunctionItIsInlinedInto) {
  std::string profile = Record("inline", {PROGRAM_trace_inline}, GetParam());
  auto calls = Calls(profile, ScratchDir("in"));
  EXPECT_EQ(calls["outer"], 7u);
  EXPECT_EQ(calls["helper"], 7u);
  EXPECT_EQ(calls["leaf"], 7u);
  // helper's entry hook runs inside outer and passes outer's call site (in main); leaf is called
  // from helper's code inlined in outer.
  EXPECT_EQ(Callers(profile, "outer"), (std::map<std::string, uint64_t>{{"main", 7}}));
  EXPECT_EQ(Callers(profile, "helper"), (std::map<std::string, uint64_t>{{"outer", 7}}));
  EXPECT_EQ(Callers(profile, "leaf"), (std::map<std::string, uint64_t>{{"helper", 7}}));
}

TEST_P(TraceModes, ThreadsCountPerThreadAndInTotal) {
  std::string profile = Record("threads", {PROGRAM_trace_threads}, GetParam());
  EXPECT_EQ(Calls(profile, ScratchDir("th"))["work"], 10000u);
  EXPECT_EQ(Callers(profile, "work"), (std::map<std::string, uint64_t>{{"run", 10000}}));
  format::RawProfile p = Load(profile);
  // Each worker thread calls run() once and work() its known number of times: counts mode's
  // CALL_SITE_COUNTS (one per thread) count them, timed mode's streams hold an entry and an
  // exit of each.
  std::multiset<uint64_t> per_thread;
  for (const auto& counts : p.call_site_counts) {
    uint64_t calls = 0;
    for (const auto& site : counts.sites) calls += site.calls;
    if (counts.tid != p.process->pid) per_thread.insert(calls - 1);
  }
  std::map<uint64_t, uint64_t> events;
  for (const auto& run : p.trace_events) events[run.tid] += run.events;
  for (const auto& [tid, n] : events)
    if (tid != p.process->pid) per_thread.insert(n / 2 - 1);
  EXPECT_EQ(per_thread, (std::multiset<uint64_t>{1000, 2000, 3000, 4000}));
  bool timed = GetParam() == "timed";
  EXPECT_EQ(p.call_site_counts.size(), timed ? 0u : 5u);
  EXPECT_TRUE(p.call_counts.empty());
}

TEST_P(TraceModes, LongjmpOutOfARecursion) {
  std::string profile = Record("longjmp", {PROGRAM_trace_longjmp}, GetParam());
  auto calls = Calls(profile, ScratchDir("lj"));
  EXPECT_EQ(calls["dive"], 10u * 51);
  EXPECT_EQ(calls["leaf"], 10u);
  // leaf is called from main, whatever frames the longjmp abandoned.
  format::RawProfile p = Load(profile);
  EXPECT_EQ(Stat(p, "trace_unmatched_exits"), 0u);
  EXPECT_EQ(Callers(profile, "leaf"), (std::map<std::string, uint64_t>{{"main", 10}}));
  EXPECT_EQ(Callers(profile, "dive"),
            (std::map<std::string, uint64_t>{{"main", 10}, {"dive", 500}}));
  // The deepest stack is main and 51 dives: the abandoned frames are closed. Counts mode keeps
  // no stack and shows the deepest sampled one.
  RunResult procedures = Hotline({"report", "-P", profile}, ScratchDir("lj-depth"));
  EXPECT_EQ(procedures.exit_code, 0) << procedures.err;
  if (GetParam() == "timed")
    EXPECT_NE(procedures.out.find("maximum call depth: 52 (traced)"), std::string::npos)
        << procedures.out;
  else
    EXPECT_NE(procedures.out.find("(sampled stacks)"), std::string::npos) << procedures.out;
}

TEST_P(TraceModes, ExitFromDeepInsideAndForkInTheMiddleOfACall) {
  std::string profile = Record("exit_deep", {PROGRAM_trace_exit_deep}, GetParam());
  std::string dir = profile.substr(0, profile.rfind('/'));
  ASSERT_EQ(ProfilesIn(dir).size(), 2u);
  auto parent = Calls(profile, ScratchDir("ed"));
  EXPECT_EQ(parent["down"], 11u);
  for (const std::string& path : ProfilesIn(dir)) {
    if (path == profile) continue;
    // The child inherited frames 0..5 and then made calls 6..10 itself.
    EXPECT_EQ(Calls(path, ScratchDir("edc"))["down"], 5u);
  }
}

INSTANTIATE_TEST_SUITE_P(CountsAndTimed, TraceModes, ::testing::Values("counts", "timed"));

TEST(TraceTimed, PerCallTimesAreConsistent) {
  std::string profile = Record("timed", {PROGRAM_trace_fib, "22"}, "timed");
  RunResult r = Hotline({"report", "-P", "-m", profile}, ScratchDir("timed-report"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  bool seen = false;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string x; std::getline(fields, x, '\t');) f.push_back(x);
    ASSERT_EQ(f.size(), 9u) << line;
    if (f[8] != "fib") continue;  // calls, total, self, average, min, max, self %, module, name
    seen = true;
    uint64_t calls = std::stoull(f[0]), avg = std::stoull(f[3]), min = std::stoull(f[4]),
             max = std::stoull(f[5]);
    EXPECT_EQ(calls, 2u * 28657 - 1);
    EXPECT_LE(min, avg);
    EXPECT_LE(avg, max);
    EXPECT_GE(std::stoull(f[1]), max);  // the outermost call is the longest and the total
  }
  EXPECT_TRUE(seen) << r.out;
}

TEST(TraceGprof, SameCallCountsAsGprof) {
  if (system("command -v gprof >/dev/null") != 0) GTEST_SKIP() << "gprof is not installed";
  std::string dir = ScratchDir("gprof");
  RunResult run = Execute({PROGRAM_trace_mutual_pg}, dir);
  ASSERT_EQ(run.exit_code, 0);
  RunResult g = Execute(
      {"/usr/bin/env", "gprof", "-b", "-p", PROGRAM_trace_mutual_pg, dir + "/gmon.out"}, dir);
  ASSERT_EQ(g.exit_code, 0) << g.err;
  // gprof's flat profile: "%time cumulative self calls self/call total/call name".
  std::map<std::string, uint64_t> gprof;
  std::istringstream in(g.out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    double pct, cumulative, self;
    uint64_t calls;
    std::string name;
    if (fields >> pct >> cumulative >> self >> calls) {
      std::string rest;
      while (fields >> rest) name = rest;
      gprof[name] = calls;
    }
  }
  auto calls = Calls(Record("gprof-mutual", {PROGRAM_trace_mutual}), ScratchDir("gm"));
  for (const char* fn : {"is_even", "is_odd"})
    EXPECT_EQ(calls[fn], gprof[fn]) << fn << "\n" << g.out;
}

}  // namespace
}  // namespace hotline

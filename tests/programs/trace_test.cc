// Exact call counts from -finstrument-functions tracing, equal (not approximately) to numbers
// known in advance, in counts and timed mode; and the same counts as gprof's.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
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

// The TAB-separated fields of a line of `-m` output.
std::vector<std::string> TabFields(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  for (std::string field; std::getline(in, field, '\t');) fields.push_back(field);
  return fields;
}

// `hotline report -M -m`: function name → calls.
std::map<std::string, uint64_t> Calls(const std::string& profile, const std::string& dir) {
  RunResult r = Hotline({"report", "-M", "-m", "-p0", profile}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, uint64_t> calls;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f = TabFields(line);  // file, line, calls, self, cumulative, name
    if (f.size() == 6) calls[f[5]] = std::strtoull(f[2].c_str(), nullptr, 10);
  }
  return calls;
}

// The call graph's edges, from `hotline export --format json` (report -G shows only functions
// that were sampled), with whether each end's calls are exact.
struct Edge {
  std::string caller, callee;
  uint64_t calls = 0;
  bool caller_exact = false, callee_exact = false;
};
std::vector<Edge> Edges(const std::string& profile) {
  std::string dir = ScratchDir("edges");
  std::string json = dir + "/graph.json";
  RunResult e = Hotline({"export", "--format", "json", profile, "-o", json}, dir);
  EXPECT_EQ(e.exit_code, 0) << e.err;
  const char* edges =
      "import json, sys\n"
      "d = json.load(open(sys.argv[1]))\n"
      "f = d['functions']\n"
      "for e in d['call_graph']:\n"
      "    a, b = f[e['caller']], f[e['callee']]\n"
      "    print(a['name'], b['name'], e['calls'], int(a['calls_exact']), int(b['calls_exact']),\n"
      "          sep='\\t')\n";
  RunResult r = Execute({"/usr/bin/python3", "-c", edges, json}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<Edge> found;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f = TabFields(line);
    if (f.size() != 5) continue;
    found.push_back(
        Edge{f[0], f[1], std::strtoull(f[2].c_str(), nullptr, 10), f[3] == "1", f[4] == "1"});
  }
  return found;
}

// The exact calls of each edge into `callee`, by caller name. Only traced callers: an edge from
// untraced code has sampled calls, not exact ones.
std::map<std::string, uint64_t> Callers(const std::string& profile, const std::string& callee) {
  std::map<std::string, uint64_t> callers;
  for (const Edge& e : Edges(profile))
    if (e.caller_exact && e.callee == callee && e.calls > 0) callers[e.caller] += e.calls;
  return callers;
}

// Every exact edge between traced functions: "caller > callee" → calls.
std::map<std::string, uint64_t> ExactEdges(const std::string& profile) {
  std::map<std::string, uint64_t> found;
  for (const Edge& e : Edges(profile))
    if (e.caller_exact && e.callee_exact && e.calls > 0)
      found[e.caller + " > " + e.callee] = e.calls;
  return found;
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

// `report -G -m -p0`: every traced edge has its calls in its caller's section, sampled or not
// (is_even and is_odd run too briefly for most of their calls to be seen).
TEST_P(TraceModes, TheCallGraphListsEdgesNoSampleSaw) {
  std::string profile = Record("graph", {PROGRAM_trace_mutual}, GetParam());
  RunResult r = Hotline({"report", "-G", "-m", "-p0", profile}, ScratchDir("graph"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, uint64_t> edges;  // "caller>callee" → calls
  std::string section;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f = TabFields(line);
    if (f.size() < 7) continue;
    if (f[0] == "function") section = f[6];
    if (f[0] == "child") edges[section + ">" + f[6]] = std::strtoull(f[4].c_str(), nullptr, 10);
  }
  EXPECT_EQ(edges["main>is_even"], 1u) << r.out;
  EXPECT_EQ(edges["is_even>is_odd"], 500u) << r.out;
  EXPECT_EQ(edges["is_odd>is_even"], 500u) << r.out;
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

TEST_P(TraceModes, ADaemonsParentKeepsItsProfile) {
  std::string profile = Record("daemon", {PROGRAM_trace_daemon}, GetParam());
  std::string dir = profile.substr(0, profile.rfind('/'));
  std::vector<std::string> profiles = ProfilesIn(dir);
  ASSERT_EQ(profiles.size(), 2u);
  format::RawProfile parent = Load(profile);
  ASSERT_TRUE(parent.process.has_value());
  ASSERT_TRUE(parent.end.has_value());
  EXPECT_EQ(parent.end->code, 0u);
  auto calls = Calls(profile, ScratchDir("daemon-parent"));
  EXPECT_EQ(calls["main"], 1u);
  EXPECT_EQ(calls["f"], 1u);
  std::string child = profiles[0] == profile ? profiles[1] : profiles[0];
  EXPECT_EQ(Calls(child, ScratchDir("daemon-child"))["f"], 1u);
  // One program: the two read together.
  RunResult both = Hotline({"report", "-M", "-m", "-p0", profile, child}, dir);
  ASSERT_EQ(both.exit_code, 0) << both.err;
  std::istringstream rows(both.out);
  uint64_t f_calls = 0;
  for (std::string row; std::getline(rows, row);) {
    std::vector<std::string> f = TabFields(row);
    if (f.size() >= 6 && f[5] == "f") f_calls = std::strtoull(f[2].c_str(), nullptr, 10);
  }
  EXPECT_EQ(f_calls, 2u) << both.out;
}

// --follow-exec follows children started by posix_spawn and execve with an environment the
// program made itself, without the runtime's variables.
TEST_P(TraceModes, FollowedChildrenOfSpawnAndExecveWithTheirOwnEnvironment) {
  std::string dir = ScratchDir("spawn");
  std::string profile = dir + "/s.hotline";
  RunResult r = Hotline({"record", "-q", "--follow-exec", "--trace=" + GetParam(), "-o", profile,
                         "--", PROGRAM_trace_spawn},
                        dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "spawn 2\nspawn-own-environment 2\nexecve-own-environment 2\n");
  std::multiset<std::string> children;
  for (const std::string& path : ProfilesIn(dir)) {
    if (path == profile) continue;
    format::RawProfile p = Load(path);
    if (!p.process || !(p.process->flags & format::kExecImage)) continue;
    ASSERT_EQ(p.process->argv.size(), 2u) << path;
    EXPECT_EQ(Calls(path, ScratchDir("spawn-child"))["leaf"], 1u) << path;
    children.insert(p.process->argv[1]);
  }
  EXPECT_EQ(children, (std::multiset<std::string>{"spawn", "spawn-own-environment",
                                                  "execve-own-environment"}));
}

TEST_P(TraceModes, AContextSwitchOntoAStackInAFrameAbandonsNothing) {
  std::string profile = Record("ucontext", {PROGRAM_trace_ucontext}, GetParam());
  auto calls = Calls(profile, ScratchDir("uc"));
  EXPECT_EQ(calls["main"], 1u);
  EXPECT_EQ(calls["foo"], 1u);
  EXPECT_EQ(calls["bar"], 1u);
  EXPECT_EQ(calls["baz"], 1u);
  std::map<std::string, uint64_t> edges = ExactEdges(profile);
  EXPECT_EQ(edges["main > foo"], 1u);
  EXPECT_EQ(edges["main > baz"], 1u);
  // bar starts on the context makecontext made: both modes name as its caller the untraced
  // code it returns to (glibc's), never foo, which is inside swapcontext (uftrace gives it none).
  for (const auto& [edge, n] : edges)
    if (n > 0 && edge.ends_with(" > bar")) {
      std::string caller = edge.substr(0, edge.size() - 6);
      EXPECT_EQ(calls[caller], 0u) << caller << " is traced";
    }
  EXPECT_EQ(Stat(Load(profile), "trace_unmatched_exits"), 0u);
}

INSTANTIATE_TEST_SUITE_P(CountsAndTimed, TraceModes, ::testing::Values("counts", "timed"));

// The inlined copies of std::sort's comparator have the name of its out-of-line copy, so counts
// mode's callers (found from the inline chain at each hook) are timed mode's (its shadow stack).
TEST(TraceSort, CountsAndTimedAgreeOnEveryEdgeOfInlinedTemplates) {
  std::map<std::string, uint64_t> counts = ExactEdges(Record("sort", {PROGRAM_trace_sort}));
  std::map<std::string, uint64_t> timed =
      ExactEdges(Record("sort-timed", {PROGRAM_trace_sort}, "timed"));
  EXPECT_EQ(counts, timed);
  uint64_t comparator_calls = 0;
  for (const auto& [edge, n] : counts)
    if (edge.find("main::{lambda at trace_sort.cc:") != std::string::npos &&
        edge.rfind(" > main::{lambda", std::string::npos) != std::string::npos)
      comparator_calls += n;
  EXPECT_GT(comparator_calls, 0u);
}

// A library dlopened at the address of one closed before it: each call is named after the
// library mapped there when it was made. Counts mode, with a writer thread and without one,
// and timed mode (where the new library's functions get ids of their own).
TEST(TraceReusedAddress, ALibraryMappedWhereAClosedOneWasKeepsItsOwnNames) {
  for (const char* mode : {"--trace=counts", "--heap", "--trace=timed"}) {
    SCOPED_TRACE(mode);
    std::string dir = ScratchDir("reused");
    std::string profile = dir + "/r.hotline";
    RunResult r = Hotline({"record", "-q", mode, "-o", profile, "--", PROGRAM_reused_address,
                           LIBRARY_reused_first, LIBRARY_reused_second},
                          dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto calls = Calls(profile, dir);
    EXPECT_EQ(calls["fa"], 1u);
    EXPECT_EQ(calls["fb2"], 1u);
    EXPECT_EQ(calls["fb1"], 2u);
    EXPECT_EQ(calls["call"], 2u);
    EXPECT_EQ(calls.count("_fini"), 0u);
    std::map<std::string, uint64_t> edges = ExactEdges(profile);
    EXPECT_EQ(edges["call > fa"], 1u);
    EXPECT_EQ(edges["call > fb2"], 1u);
    EXPECT_EQ(edges["fb2 > fb1"], 2u);
  }
}

// Runs read together: a count is exact only where every run's is. An untraced run's calls are
// estimates, so its sum with a traced run's is one, and `-m` says so too.
TEST(TraceMerged, ExactOnlyWhereEveryPartIsExact) {
  std::string traced = Record("merged-a", {PROGRAM_trace_fib, "20"});
  std::string traced_again = Record("merged-b", {PROGRAM_trace_fib, "20"});
  std::string dir = ScratchDir("merged-c");
  std::string sampled = dir + "/sampled.hotline";
  ASSERT_EQ(
      Hotline({"record", "-q", "--no-trace", "-o", sampled, "--", PROGRAM_trace_fib, "20"}, dir)
          .exit_code,
      0);
  auto main_calls = [&](const std::string& a, const std::string& b) {
    RunResult r = Hotline({"report", "-P", "-m", "-p0", a, b}, dir);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);)
      if (line.ends_with("\tmain")) return line.substr(0, line.find('\t'));
    return std::string("none");
  };
  EXPECT_EQ(main_calls(traced, traced_again), "2");
  EXPECT_EQ(main_calls(traced, sampled).substr(0, 1), "~");
}

// `report -P -m`: function name → the file it is placed in.
std::map<std::string, std::string> Files(const std::string& profile) {
  RunResult r = Hotline({"report", "-P", "-m", "-p0", profile}, ScratchDir("files"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::string> files;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f = TabFields(line);
    if (f.size() == 9) files[f[8]] = f[7];
  }
  return files;
}

// A program with its own malloc, free, calloc and realloc counts the calls made to them: under
// every mode that puts the runtime into it, it sees what it sees plain (the runtime calls neither
// them nor the glibc functions that would), and hotline's exact counts are the program's own.
// Its allocator is placed in its own file, not in stdlib.h where the prototypes are.
TEST(TraceOwnAllocator, TheProgramsAllocatorSeesOnlyTheProgram) {
  std::string dir = ScratchDir("own-allocator");
  RunResult plain = Execute({PROGRAM_own_allocator}, dir);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  std::map<std::string, uint64_t> printed;
  std::istringstream words(plain.out);
  for (std::string word; words >> word;) {
    size_t eq = word.find('=');
    ASSERT_NE(eq, std::string::npos) << plain.out;
    printed[word.substr(0, eq)] = std::strtoull(word.c_str() + eq + 1, nullptr, 10);
  }
  ASSERT_EQ(printed.size(), 4u) << plain.out;
  EXPECT_GE(printed["malloc"], 7u) << plain.out;  // its own 6, and whatever glibc asked for it
  struct Mode {
    std::vector<std::string> options;
    bool writer_thread;  // the runtime keeps a thread of its own
  };
  const std::vector<Mode> modes = {{{"--trace=counts"}, true},
                                   {{"--trace=timed"}, true},
                                   {{"--heap"}, false},
                                   {{"--heap-sample"}, false},
                                   {{"--sampler", "signal"}, true}};
  for (const Mode& mode : modes) {
    SCOPED_TRACE(mode.options.back());
    std::string profile = dir + "/p.hotline";
    std::vector<std::string> args = {"record", "-q", "-o", profile};
    args.insert(args.end(), mode.options.begin(), mode.options.end());
    args.insert(args.end(), {"--", PROGRAM_own_allocator});
    RunResult r = Hotline(args, dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // The one call the runtime cannot keep from the program: glibc takes each new thread's TLS
    // vector from the program's calloc (here a malloc too), the runtime's writer thread's
    // included, at start-up. hotline does not count it.
    std::map<std::string, uint64_t> seen = printed;
    if (mode.writer_thread) ++seen["calloc"], ++seen["malloc"];
    std::string line;
    for (const char* name : {"malloc", "free", "calloc", "realloc"})
      line += (line.empty() ? "" : " ") + std::string(name) + "=" + std::to_string(seen[name]);
    EXPECT_EQ(r.out, line + "\n");
    std::map<std::string, uint64_t> expected = printed;
    // Timed mode ends a thread's stream at its exit hook, before glibc's two free(NULL) of the
    // thread's exit (__libc_thread_freeres); counts mode counts on until the thread is gone.
    if (mode.options.back() == "--trace=timed") expected["free"] -= 2;
    auto calls = Calls(profile, dir);
    for (const auto& [name, n] : expected) EXPECT_EQ(calls[name], n) << name;
    auto files = Files(profile);
    for (const auto& [name, n] : printed)
      if (n > 0) EXPECT_EQ(files[name], "own_allocator.c") << name;
  }
}

TEST(TraceTimed, PerCallTimesAreConsistent) {
  std::string profile = Record("timed", {PROGRAM_trace_fib, "22"}, "timed");
  RunResult r = Hotline({"report", "-P", "-m", profile}, ScratchDir("timed-report"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  bool seen = false;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f = TabFields(line);
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

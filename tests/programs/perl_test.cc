// Devel::Hotline on real Perl scripts (tests/perl/scripts): per-line statement counts identical
// to NYTProf's, exact call counts, the time of a sub that spins for a known time, and the
// behaviour perl users rely on (syntax errors, die, fork, `hotline record -- perl`).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "format/raw_profile.h"
#include "format/schema.h"
#include "harness.h"

namespace hotline::testing {
namespace {

const std::string kScripts = std::string(HOTLINE_SOURCE_DIR) + "/tests/perl/scripts/";
const std::string kPerlLib = HOTLINE_PERL_LIB;

// file → line → statements executed
using LineCounts = std::map<std::string, std::map<uint64_t, uint64_t>>;

// NYTProf merges the string evals of one call site that have the same source into the first
// ("(eval 1)[x.pl:13]" holds those of evals 2, 3 and 4): both sides are compared per call site.
std::string Site(const std::string& file) {
  if (file.rfind("(eval ", 0) != 0) return file;
  size_t bracket = file.find('[');
  return bracket == std::string::npos ? file : "(eval)" + file.substr(bracket);
}

// Only the test's own sources (and string evals in them), not perl's library.
bool Ours(const std::string& file) {
  if (file.rfind("(eval ", 0) == 0) return file.find("[/usr/") == std::string::npos;
  return file.rfind("/usr/", 0) != 0;
}

RunResult RunHotline(const std::string& script, const std::string& dir,
                     const std::vector<std::string>& extra_env = {}) {
  std::vector<std::string> argv = {"/usr/bin/env", "PERL5LIB=" + kPerlLib,
                                   "HOTLINE_OUTPUT=" + dir + "/p.hotline"};
  argv.insert(argv.end(), extra_env.begin(), extra_env.end());
  argv.insert(argv.end(), {"perl", "-d:Hotline", kScripts + script});
  return Execute(argv, dir);
}

// LINE_COUNTS are running totals: a file's last record is its count (docs/format.md).
LineCounts HotlineCounts(const format::RawProfile& profile) {
  std::map<std::string, const format::RawLineCounts*> last;
  for (const format::RawLineCounts& lc : profile.line_counts) {
    EXPECT_EQ(lc.module, "perl");
    if (Ours(lc.file)) last[lc.file] = &lc;
  }
  LineCounts counts;
  for (const auto& [file, lc] : last)
    for (auto [line, n] : lc->lines) counts[Site(file)][line] += n;
  return counts;
}

LineCounts NytprofCounts(const std::string& script, const std::string& dir) {
  RunResult run = Execute({"/usr/bin/env", "NYTPROF=file=" + dir + "/nytprof.out", "perl",
                           "-d:NYTProf", kScripts + script},
                          dir);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  RunResult dump =
      Execute({"/usr/bin/perl", std::string(HOTLINE_SOURCE_DIR) + "/tests/perl/nytprof_counts.pl",
               dir + "/nytprof.out"},
              dir);
  EXPECT_EQ(dump.exit_code, 0) << dump.err;
  LineCounts counts;
  std::istringstream in(dump.out);
  std::string row;
  while (std::getline(in, row)) {
    std::istringstream fields(row);
    std::string file, line, n;
    std::getline(fields, file, '\t');
    std::getline(fields, line, '\t');
    std::getline(fields, n, '\t');
    counts[Site(file)][std::stoull(line)] += std::stoull(n);
  }
  return counts;
}

std::string Show(const LineCounts& counts) {
  std::string text;
  for (const auto& [file, lines] : counts)
    for (auto [line, n] : lines)
      text += file + ":" + std::to_string(line) + " " + std::to_string(n) + "\n";
  return text;
}

struct Profiled {
  std::string dir;
  RunResult plain, run;
  format::RawProfile profile;
};

Profiled ProfileScript(const std::string& script) {
  std::string dir = ScratchDir("perl_" + script);
  Profiled p;
  p.dir = dir;
  p.plain = Execute({"/usr/bin/perl", kScripts + script}, dir);
  p.run = RunHotline(script, dir);
  EXPECT_EQ(p.run.exit_code, p.plain.exit_code) << p.run.err;
  EXPECT_EQ(p.run.out, p.plain.out);
  p.profile = Load(dir + "/p.hotline");
  return p;
}

// Calls per edge, by the callee's and caller's names ("" for a thread's entry).
std::map<std::pair<std::string, std::string>, uint64_t> CallEdges(
    const format::RawProfile& profile) {
  auto name = [&](uint64_t trace_id) -> std::string {
    if (trace_id == 0) return "";
    auto address = profile.trace_functions.find(trace_id);
    if (address == profile.trace_functions.end()) return "?";
    EXPECT_TRUE(format::IsNamedFrame(address->second));
    auto frame = profile.frames.find(format::NamedFrameId(address->second));
    return frame == profile.frames.end() ? "?" : frame->second.name;
  };
  // CALL_COUNTS are running totals: a thread's last record is its count.
  std::map<uint64_t, const format::RawCallCounts*> last;
  for (const format::RawCallCounts& cc : profile.call_counts) last[cc.tid] = &cc;
  std::map<std::pair<std::string, std::string>, uint64_t> edges;
  for (const auto& [tid, cc] : last)
    for (const format::RawCallEdge& e : cc->edges)
      edges[{name(e.caller), name(e.callee)}] += e.calls;
  return edges;
}

class PerlCounts : public ::testing::TestWithParam<std::string> {};

TEST_P(PerlCounts, LineCountsEqualNytprofs) {
  std::string script = GetParam();
  Profiled p = ProfileScript(script);
  LineCounts ours = HotlineCounts(p.profile);
  LineCounts theirs = NytprofCounts(script, ScratchDir("nytprof_" + script));
  ASSERT_FALSE(theirs.empty());
  EXPECT_EQ(Show(ours), Show(theirs));
}

INSTANTIATE_TEST_SUITE_P(Scripts, PerlCounts,
                         ::testing::Values("loops.pl", "fib.pl", "closure.pl", "sort.pl",
                                           "regex.pl", "eval.pl", "die.pl", "goto.pl"),
                         [](const auto& info) {
                           std::string name = info.param;
                           return name.substr(0, name.find('.'));
                         });

TEST(Perl, FibCallsAreExact) {
  Profiled p = ProfileScript("fib.pl");
  auto edges = CallEdges(p.profile);
  // fib(15) makes 1973 calls: 3 from the program, the rest from fib itself.
  EXPECT_EQ((edges[{"main", "main::fib"}]), 3u);
  EXPECT_EQ((edges[{"main::fib", "main::fib"}]), 3u * 1973 - 3);
  const format::RawProcess& process = *p.profile.process;
  EXPECT_EQ(process.trace, format::TraceMode::kCounts);
  EXPECT_EQ(process.clock, format::ClockMode::kWall);
  EXPECT_EQ(process.sampler, format::Sampler::kNone);
  ASSERT_TRUE(p.profile.end.has_value());
  EXPECT_EQ(p.profile.end->how, format::EndHow::kExit);
  // fib's frame at line 6 sits under a frame of fib or of the program at line 12.
  bool found = false;
  for (const auto& [id, node] : p.profile.stack_nodes) {
    ASSERT_TRUE(format::IsNamedFrame(node.address));
    const format::RawFrame& frame = p.profile.frames.at(format::NamedFrameId(node.address));
    if (frame.name != "main::fib") continue;
    EXPECT_EQ(frame.def_line, 4u);
    ASSERT_NE(node.parent, 0u);
    const format::RawStackNode& parent = p.profile.stack_nodes.at(node.parent);
    const format::RawFrame& caller = p.profile.frames.at(format::NamedFrameId(parent.address));
    EXPECT_TRUE((caller.name == "main" && caller.line == 12) ||
                (caller.name == "main::fib" && caller.line == 7))
        << caller.name << ":" << caller.line;
    found = true;
  }
  EXPECT_TRUE(found);
}

TEST(Perl, ClosureAndDieEdges) {
  auto closure = CallEdges(ProfileScript("closure.pl").profile);
  EXPECT_EQ((closure[{"main", "main::make_counter"}]), 2u);
  bool anon = false;
  for (const auto& [edge, calls] : closure) {
    if (edge.second.find("__ANON__[") == std::string::npos) continue;
    EXPECT_EQ(calls, 100u) << edge.second;
    anon = true;
  }
  EXPECT_TRUE(anon);
  auto died = CallEdges(ProfileScript("die.pl").profile);
  EXPECT_EQ((died[{"main", "main::outer"}]), 30u);
  EXPECT_EQ((died[{"main::outer", "main::middle"}]), 30u);
  EXPECT_EQ((died[{"main::middle", "main::inner"}]), 30u);
}

// A sub is not its memory: perl frees a BEGIN block once it ran and string evals' subs once
// dropped, and compiles the next sub where they were; each keeps its own name and calls (as
// NYTProf counts them, BEGIN@4.1 for a line's second BEGIN too). An XSUB called through a
// string is counted as called by name.
TEST(Perl, SubsCompiledWhereFreedOnesWereKeepTheirOwnNames) {
  std::map<std::string, uint64_t> calls;
  for (const auto& [edge, n] : CallEdges(ProfileScript("reused_subs.pl").profile))
    calls[edge.second] += n;
  auto anon = [&](int n, int line) {
    return "main::__ANON__[(eval " + std::to_string(n) + ")[" + kScripts +
           "reused_subs.pl:" + std::to_string(line) + "]:1]";
  };
  for (const std::string& sub : {std::string("main::BEGIN@4"), std::string("main::BEGIN@4.1"),
                                 std::string("main::BEGIN@5"), std::string("main::foo"),
                                 anon(1, 9), anon(2, 10), anon(3, 11)})
    EXPECT_EQ(calls[sub], 1u) << sub;
  EXPECT_EQ(calls["List::Util::sum"], 2u);
}

// Callers where the call does not come from a sub's own code, as NYTProf counts them: the subs a
// block run by an XSUB calls are the XSUB's callees, those a sort block calls are CORE:sort's,
// a sub that does not exist is counted as called, a call right after an XSUB died is its
// caller's again, and an overloaded operator that perl calls itself is counted.
TEST(Perl, CallersThroughXsAreAsNytprofCountsThem) {
  auto edges = CallEdges(ProfileScript("xs_callers.pl").profile);
  EXPECT_EQ((edges[{"List::Util::first", "main::pred"}]), 3u);
  EXPECT_EQ((edges[{"List::Util::reduce", "main::pred"}]), 3u);
  EXPECT_EQ((edges[{"main::CORE:sort", "main::pred"}]), 6u);
  EXPECT_EQ((edges[{"main", "main::nosuch"}]), 1u);
  EXPECT_EQ((edges[{"main", "main::id"}]), 1u);
  EXPECT_EQ((edges[{"Scalar::Util::weaken", "main::id"}]), 0u);
  EXPECT_EQ((edges[{"main", "Scalar::Util::weaken"}]), 1u);
  uint64_t overloaded = 0;
  for (const auto& [edge, n] : edges)
    if (edge.second.starts_with("Obj::__ANON__[")) overloaded += n;
  EXPECT_EQ(overloaded, 1u);
}

// `goto &target` leaves trampoline: target is entered from trampoline's caller, and its
// statements are under the program's node, not trampoline's.
TEST(Perl, GotoSubEntersFromTheCaller) {
  Profiled p = ProfileScript("goto.pl");
  auto edges = CallEdges(p.profile);
  EXPECT_EQ((edges[{"main", "main::trampoline"}]), 20u);
  EXPECT_EQ((edges[{"main", "main::target"}]), 20u);
  EXPECT_EQ((edges[{"main::trampoline", "main::target"}]), 0u);
  for (const auto& [id, node] : p.profile.stack_nodes) {
    const format::RawFrame& frame = p.profile.frames.at(format::NamedFrameId(node.address));
    if (frame.name != "main::target") continue;
    ASSERT_NE(node.parent, 0u);
    const format::RawStackNode& parent = p.profile.stack_nodes.at(node.parent);
    EXPECT_EQ(p.profile.frames.at(format::NamedFrameId(parent.address)).name, "main");
  }
}

TEST(Perl, StringEvalsKeepTheirSource) {
  Profiled p = ProfileScript("eval.pl");
  bool found = false;
  for (const auto& [name, text] : p.profile.sources) {
    if (name.rfind("(eval ", 0) != 0 || text.find("$x += $i;") == std::string::npos) continue;
    EXPECT_NE(name.find("eval.pl:13]"), std::string::npos) << name;
    found = true;
  }
  EXPECT_TRUE(found);
}

TEST(Perl, MinusEKeepsItsSource) {
  std::string dir = ScratchDir("perl_e");
  RunResult run =
      Execute({"/usr/bin/env", "PERL5LIB=" + kPerlLib, "HOTLINE_OUTPUT=p.hotline", "perl",
               "-d:Hotline", "-e", "my $s = 0;\n$s += $_ for 1 .. 10;\nprint $s"},
              dir);
  EXPECT_EQ(run.out, "55");
  format::RawProfile profile = Load(dir + "/p.hotline");
  EXPECT_EQ(profile.sources["-e"], "my $s = 0;\n$s += $_ for 1 .. 10;\nprint $s\n");
  LineCounts counts = HotlineCounts(profile);
  EXPECT_EQ(counts["-e"][2], 1u);
}

// The samples under spin's frames add up to the time spin took, within 5%.
TEST(Perl, SpinningSubGetsItsTime) {
  Profiled p = ProfileScript("busy.pl");
  double wall = 0, cpu = 0;
  ASSERT_EQ(std::sscanf(p.run.err.c_str(), "spin: %lf %lf", &wall, &cpu), 2) << p.run.err;
  uint64_t spin_ns = 0, total_ns = 0;
  for (const format::SampleRecord& s : p.profile.samples) {
    total_ns += s.weight;
    for (uint64_t frame : p.profile.stack(s.node)) {
      if (p.profile.frames.at(frame & ~format::kNamedFrameTag).name == "main::spin") {
        spin_ns += s.weight;
        break;
      }
    }
  }
  EXPECT_NEAR(double(spin_ns) / 1e9, wall, 0.05 * wall);
  EXPECT_GE(total_ns, spin_ns);
}

TEST(Perl, SyntaxErrorFailsAsWithoutHotline) {
  Profiled p = ProfileScript("syntax_error.pl");
  EXPECT_NE(p.plain.exit_code, 0);
  EXPECT_EQ(p.run.err, p.plain.err);
  EXPECT_TRUE(p.profile.process.has_value());
}

TEST(Perl, ForkedChildWritesItsOwnProfile) {
  std::string dir = ScratchDir("perl_fork");
  RunResult run = Execute(
      {"/usr/bin/env", "PERL5LIB=" + kPerlLib, "HOTLINE_OUTPUT=" + dir + "/p.hotline", "perl",
       "-d:Hotline", "-e",
       "my $pid = fork;\nif ($pid == 0) { my $c = 0; $c++ for 1 .. 7; exit 3 }\nwaitpid($pid, "
       "0);\nprint $? >> 8;\n"},
      dir);
  EXPECT_EQ(run.out, "3");
  std::vector<std::string> profiles = ProfilesIn(dir);
  ASSERT_EQ(profiles.size(), 2u);
  int children = 0;
  for (const std::string& path : profiles) {
    format::RawProfile profile = Load(path);
    ASSERT_TRUE(profile.process.has_value());
    ASSERT_TRUE(profile.end.has_value());
    if (profile.process->flags & format::kForkedChild) {
      ++children;
      EXPECT_EQ(profile.end->code, 3u);
      // The `if` and the three statements of its block ran in the child.
      EXPECT_EQ(HotlineCounts(profile)["-e"][2], 4u);
    }
  }
  EXPECT_EQ(children, 1);
}

TEST(Perl, UnderscoreExitLeavesAProfile) {
  std::string dir = ScratchDir("perl_exit");
  RunResult run =
      Execute({"/usr/bin/env", "PERL5LIB=" + kPerlLib, "HOTLINE_OUTPUT=p.hotline", "perl",
               "-d:Hotline", "-MPOSIX", "-e", "my $n = 0;\n$n++ for 1 .. 5;\nPOSIX::_exit(4);\n"},
              dir);
  EXPECT_EQ(run.exit_code, 4);
  format::RawProfile profile = Load(dir + "/p.hotline");
  ASSERT_TRUE(profile.end.has_value());
  EXPECT_EQ(profile.end->how, format::EndHow::kUnderscoreExit);
  EXPECT_EQ(profile.end->code, 4u);
  EXPECT_EQ(HotlineCounts(profile)["-e"][2], 1u);
}

// Devel::Hotline::stop() and start() (NYTProf's DB::disable_profile and enable_profile), and
// HOTLINE_PERL_START=no (NYTProf's start=no): nothing is counted or timed while stopped.
TEST(Perl, StartAndStopLeaveOutWhatRanBetween) {
  Profiled p = ProfileScript("start_stop.pl");
  EXPECT_EQ(p.run.out, "sum: 560\n");
  std::string script = kScripts + "start_stop.pl";
  LineCounts counts = HotlineCounts(p.profile);
  EXPECT_EQ(counts[script][5], 11u);  // the loop's 10 statements and the `for` itself
  EXPECT_EQ(counts[script].count(7), 0u);
  EXPECT_EQ(counts[script][9], 6u);
  auto edges = CallEdges(p.profile);
  EXPECT_EQ((edges[{"main", "main::twice"}]), 15u);

  std::string dir = ScratchDir("perl_start_no");
  RunResult late = RunHotline("start_stop.pl", dir, {"HOTLINE_PERL_START=no"});
  EXPECT_EQ(late.exit_code, 0) << late.err;
  format::RawProfile profile = Load(dir + "/p.hotline");
  counts = HotlineCounts(profile);
  EXPECT_EQ(counts[script].count(5), 0u);
  EXPECT_EQ(counts[script].count(7), 0u);
  EXPECT_EQ(counts[script][9], 6u);
  edges = CallEdges(profile);
  EXPECT_EQ((edges[{"main", "main::twice"}]), 5u);
}

// ithreads: each thread's calls and time are its own, under its tid; the entry sub of each
// thread is called by the thread's start, not by the main program.
TEST(Perl, IthreadsAreEachTheirOwnThread) {
  Profiled p = ProfileScript("threads.pl");
  EXPECT_EQ(p.run.out, "results: 50050000 100100000 385\n");
  ASSERT_EQ(p.profile.threads.size(), 3u);
  for (const format::RawThread& t : p.profile.threads) EXPECT_TRUE(t.cpu_ns.has_value()) << t.tid;
  // Per thread: (caller, callee) → calls, from each thread's last CALL_COUNTS.
  std::map<uint64_t, std::map<std::pair<std::string, std::string>, uint64_t>> by_thread;
  for (const format::RawCallCounts& counts : p.profile.call_counts) {
    auto& edges = by_thread[counts.tid];
    edges.clear();
    for (const format::RawCallEdge& e : counts.edges) {
      auto name = [&](uint64_t id) -> std::string {
        if (id == 0) return "";
        return p.profile.frames.at(format::NamedFrameId(p.profile.trace_functions.at(id))).name;
      };
      edges[{name(e.caller), name(e.callee)}] = e.calls;
    }
  }
  ASSERT_EQ(by_thread.size(), 3u);
  std::multiset<uint64_t> worker_calls;
  for (auto& [tid, edges] : by_thread) {
    if (edges.count({"", "main::worker"})) {
      EXPECT_EQ((edges[{"", "main::worker"}]), 1u);
      worker_calls.insert(edges[{"main::worker", "main::work"}]);
    } else {
      EXPECT_EQ((edges[{"main", "main::work"}]), 7u);
    }
  }
  EXPECT_EQ(worker_calls, (std::multiset<uint64_t>{100, 200}));
  // Each thread's time is under its own tid: the workers' samples hold main::work.
  std::set<uint64_t> timed;
  for (const format::SampleRecord& s : p.profile.samples)
    for (uint64_t frame : p.profile.stack(s.node))
      if (p.profile.frames.at(format::NamedFrameId(frame)).name == "main::worker")
        timed.insert(s.tid);
  EXPECT_EQ(timed.size(), 2u);
}

// A killed program: the profile holds what was written before (about once a second), readable.
// The program is a script whose #! line runs perl, started as `hotline record -- ./script`.
TEST(Perl, KilledScriptLeavesAReadableProfile) {
  std::string dir = ScratchDir("perl_killed");
  std::string script = dir + "/spin";
  {
    std::ofstream out(script);
    out << "#!/usr/bin/env perl\nuse Time::HiRes qw(time);\nmy $end = time + 1.5;\n"
           "my $n = 0;\nwhile (time < $end) { $n++ }\nkill 'KILL', $$;\n";
  }
  ASSERT_EQ(chmod(script.c_str(), 0755), 0);
  RunResult run = Hotline({"record", "-q", "-o", dir + "/k.hotline", "--", script}, dir);
  EXPECT_EQ(run.exit_code, 128 + 9) << run.err;
  format::RawProfile profile = Load(dir + "/k.hotline");
  ASSERT_TRUE(profile.process.has_value());
  EXPECT_FALSE(profile.end.has_value());
  EXPECT_GT(HotlineCounts(profile)[script][5], 0u);
  RunResult report = Hotline({"report", dir + "/k.hotline"}, dir);
  EXPECT_EQ(report.exit_code, 0) << report.err;
}

// A script that a signal ends (SIGTERM from timeout, here its own, sent while it works, or
// while it sleeps) leaves everything it counted, and its END says which signal, in both modes.
TEST(Perl, SignalledScriptLeavesItsWholeProfile) {
  for (const char* mode : {"exact", "sample"}) {
    for (const char* where : {"working", "sleeping"}) {
      std::string dir = ScratchDir(std::string("perl_term_") + mode + "_" + where);
      std::string script = dir + "/term.pl";
      {
        std::ofstream out(script);
        out << "my $n = 0;\n"
               "for my $i (1 .. 200000) { $n += $i }\n"
            << (std::string(where) == "working" ? "kill 'TERM', $$; for (;;) { $n++ }\n"
                                                : "if (fork() == 0) { sleep 1; kill 'TERM', "
                                                  "getppid(); exit 0 }\nsleep 30;\n");
      }
      std::vector<std::string> args = {"record", "-q", "-o", dir + "/t.hotline"};
      if (std::string(mode) == "sample") args.push_back("--perl-sample");
      args.insert(args.end(), {"--", "/usr/bin/perl", script});
      RunResult run = Hotline(args, dir);
      EXPECT_EQ(run.exit_code, 128 + SIGTERM) << mode << " " << where << ": " << run.err;
      format::RawProfile profile = Load(dir + "/t.hotline");
      ASSERT_TRUE(profile.end.has_value()) << mode << " " << where;
      EXPECT_EQ(profile.end->how, format::EndHow::kSignal);
      EXPECT_EQ(profile.end->code, uint64_t(SIGTERM));
      if (std::string(mode) == "exact") {
        EXPECT_GE(HotlineCounts(profile)[script][2], 200000u);
      }
    }
  }
}

// HOTLINE_PERL_START=init|end (NYTProf's start=init|end): measuring begins with that phase.
TEST(Perl, StartAtInitOrEndLeavesOutTheEarlierPhases) {
  std::string script = kScripts + "phases.pl";
  auto counted_lines = [&](const std::string& start) {
    std::string dir = ScratchDir("perl_phase_" + start);
    RunResult run = RunHotline("phases.pl", dir, {"HOTLINE_PERL_START=" + start});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.out, "run: 3\n");
    LineCounts counts = HotlineCounts(Load(dir + "/p.hotline"));
    std::set<uint64_t> lines;
    for (auto [line, n] : counts[script]) lines.insert(line);
    return lines;
  };
  EXPECT_EQ(counted_lines("begin"), (std::set<uint64_t>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(counted_lines("init"), (std::set<uint64_t>{2, 4, 5, 6, 7}));
  EXPECT_EQ(counted_lines("end"), (std::set<uint64_t>{6}));
}

TEST(Perl, HotlineRecordLoadsTheModule) {
  std::string dir = ScratchDir("perl_record");
  RunResult run = Hotline(
      {"record", "-q", "-o", dir + "/r.hotline", "--", "/usr/bin/perl", kScripts + "fib.pl"}, dir);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "fib: 1830\n");
  format::RawProfile profile = Load(dir + "/r.hotline");
  auto edges = CallEdges(profile);
  EXPECT_EQ((edges[{"main::fib", "main::fib"}]), 3u * 1973 - 3);

  // hotline's own views of it, through the model: fib's exact calls, each line's exact count.
  RunResult functions = Hotline({"report", "-M", "-m", dir + "/r.hotline"}, dir);
  EXPECT_EQ(functions.exit_code, 0) << functions.err;
  bool fib_calls = false;
  std::istringstream rows(functions.out);
  for (std::string row; std::getline(rows, row);)
    if (row.ends_with("\tmain::fib")) fib_calls = row.find("\t5919\t") != std::string::npos;
  EXPECT_TRUE(fib_calls) << functions.out;
  // The profiler's own subs (its END block, _finish) are nobody's time.
  EXPECT_EQ(functions.out.find("Devel::Hotline"), std::string::npos) << functions.out;
  RunResult annotated = Hotline({"annotate", "-m", dir + "/r.hotline"}, dir);
  EXPECT_EQ(annotated.exit_code, 0) << annotated.err;
  LineCounts shown;
  std::istringstream lines(annotated.out);
  for (std::string row; std::getline(lines, row);) {
    std::vector<std::string> cells;
    std::istringstream fields(row);
    for (std::string cell; std::getline(fields, cell, '\t');) cells.push_back(cell);
    if (cells.size() == 4 && Ours(cells[0]) && !cells[2].empty())
      shown[Site(cells[0])][std::stoull(cells[1])] += std::stoull(cells[2]);
  }
  EXPECT_EQ(shown, HotlineCounts(profile));
}

// Slow ops are timed as NYTProf's CORE: subs of the caller's package, called once per op run:
// the `while (//g)` matches 300 times and fails once, the s///g and the print run once.
TEST(Perl, SlowOpsAreCoreSubs) {
  Profiled p = ProfileScript("regex.pl");
  auto edges = CallEdges(p.profile);
  EXPECT_EQ((edges[{"main", "main::CORE:match"}]), 301u);
  EXPECT_EQ((edges[{"main", "main::CORE:subst"}]), 1u);
  EXPECT_EQ((edges[{"main", "main::CORE:print"}]), 1u);
  bool flagged = false;
  for (const auto& [id, frame] : p.profile.frames)
    if (frame.name == "main::CORE:match") flagged = frame.flags & format::kFramePseudo;
  EXPECT_TRUE(flagged);
  // The report's line of a slow op counts its runs.
  RunResult lines = Hotline({"report", "-T", "-m", p.dir + "/p.hotline"}, p.dir);
  EXPECT_EQ(lines.exit_code, 0) << lines.err;
  bool counted = false;
  std::istringstream rows(lines.out);
  for (std::string row; std::getline(rows, row);)
    if (row.ends_with("\t[main::CORE:match]")) counted = row.find("\t301\t") != std::string::npos;
  EXPECT_TRUE(counted) << lines.out;
}

// Sampling mode: the samples under spin's frames add up to the CPU time spin took, the timer
// being perf's task clock (the rate asked for, not the scheduler's ticks).
TEST(Perl, SamplingGivesTheSpinningSubItsCpuTime) {
  std::string dir = ScratchDir("perl_sample_busy");
  RunResult plain = Execute({"/usr/bin/perl", kScripts + "busy.pl"}, dir);
  RunResult run = RunHotline("busy.pl", dir, {"HOTLINE_PERL_SAMPLE=1000000"});
  EXPECT_EQ(run.exit_code, plain.exit_code) << run.err;
  EXPECT_EQ(run.out, plain.out);
  double wall = 0, cpu = 0;
  ASSERT_EQ(std::sscanf(run.err.c_str(), "spin: %lf %lf", &wall, &cpu), 2) << run.err;
  format::RawProfile profile = Load(dir + "/p.hotline");
  ASSERT_TRUE(profile.process.has_value());
  EXPECT_EQ(profile.process->sampler, format::Sampler::kPerfTaskClock);
  EXPECT_EQ(profile.process->clock, format::ClockMode::kCpu);
  EXPECT_EQ(profile.process->period_ns, 1000000u);
  // No counts are claimed: sampling sees no statement it did not interrupt.
  EXPECT_TRUE(profile.line_counts.empty());
  uint64_t spin = 0, light = 0;
  for (const format::SampleRecord& s : profile.samples) {
    for (uint64_t frame : profile.stack(s.node)) {
      if (!format::IsNamedFrame(frame)) continue;  // libc's times(), below the Perl frames
      const std::string& name = profile.frames.at(format::NamedFrameId(frame)).name;
      if (name == "main::spin") spin += s.weight;
      if (name == "main::light") light += s.weight;
    }
  }
  // times() counts in 10 ms clock ticks: spin's CPU time is known to ±10 ms.
  EXPECT_NEAR(double(spin) / 1e3, cpu, 0.05 * cpu + 0.01);
  EXPECT_LT(light, spin / 10);
}

// Native code below a Perl sub (an XS module's C) appears under the sub that called it.
TEST(Perl, SamplingShowsNativeFramesUnderThePerlSub) {
  std::string dir = ScratchDir("perl_sample_native");
  RunResult run = RunHotline("native.pl", dir, {"HOTLINE_PERL_SAMPLE=1000000"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.size(), 33u);
  format::RawProfile profile = Load(dir + "/p.hotline");
  // Native leaves under digest: MD5's C code, and libc's memcpy building the strings.
  uint64_t native = 0, md5 = 0, total = 0;
  for (const format::SampleRecord& s : profile.samples) {
    total += s.weight;
    std::vector<uint64_t> stack = profile.stack(s.node);  // innermost first
    if (stack.empty() || format::IsNamedFrame(stack.front())) continue;
    bool under_digest = false;
    for (uint64_t frame : stack)
      under_digest |= format::IsNamedFrame(frame) &&
                      profile.frames.at(format::NamedFrameId(frame)).name == "main::digest";
    if (!under_digest) continue;
    native += s.weight;
    const format::RawModule* module = profile.moduleAt(stack.front(), s.time);
    if (module && module->path.find("Digest/MD5/MD5.so") != std::string::npos) md5 += s.weight;
  }
  EXPECT_GT(native, total / 2) << native << " of " << total;
  EXPECT_GT(md5, total / 5) << md5 << " of " << total;

  // The model symbolizes the native part and keeps the Perl part: [MD5.so] called by digest.
  RunResult graph = Hotline({"report", "-G", "-m", dir + "/p.hotline"}, dir);
  ASSERT_EQ(graph.exit_code, 0) << graph.err;
  EXPECT_NE(graph.out.find("main::digest"), std::string::npos);
  EXPECT_NE(graph.out.find("MD5.so"), std::string::npos) << graph.out;
}

// `hotline record --perl-sample`: the program's output, exit code and children as without it;
// a child that only execs (system, backticks) leaves no profile, one that runs Perl has its own.
TEST(Perl, RecordPerlSampleKeepsTheProgramsBehaviour) {
  std::string dir = ScratchDir("perl_record_sample");
  const std::string program =
      "system('true');\nmy $x = `echo hi`;\nprint \"got $x\";\n"
      "if (!fork) { my $c = 0; $c++ for 1 .. 5; exit 3 }\nwait;\nprint $? >> 8, \"\\n\";\n"
      "my $s = 0;\n$s += $_ for 1 .. 2000000;\nexit 5;\n";
  RunResult run = Hotline({"record", "-q", "--perl-sample", "-o", dir + "/r.hotline", "--",
                           "/usr/bin/perl", "-e", program},
                          dir);
  EXPECT_EQ(run.exit_code, 5) << run.err;
  EXPECT_EQ(run.out, "got hi\n3\n");
  std::vector<std::string> profiles = ProfilesIn(dir);
  EXPECT_EQ(profiles.size(), 2u);
  format::RawProfile profile = Load(dir + "/r.hotline");
  ASSERT_TRUE(profile.end.has_value());
  EXPECT_EQ(profile.end->code, 5u);
  EXPECT_FALSE(profile.samples.empty());
  RunResult summary = Hotline({"report", dir + "/r.hotline"}, dir);
  EXPECT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find("perf task-clock"), std::string::npos) << summary.out;

  RunResult refused = Hotline({"record", "--perl-sample", "--", "/bin/true"}, dir);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("not a perl program"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace hotline::testing

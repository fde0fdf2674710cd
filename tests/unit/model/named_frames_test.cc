// Named frames end to end below the front-ends: a profile shaped as Devel::Hotline writes one
// (FRAME, STACK_NODE on tagged addresses, weighted SAMPLEs, LINE_COUNTS, CALL_COUNTS, SOURCE) is
// written with the format's writer, read back by LoadProfile with no symbolizer (a resolver
// that fails the test if asked), and gives the functions, lines, exact counts, recursion, the
// stored source text and the invariants; merged with itself, it doubles.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "format/schema.h"
#include "format/writer.h"
#include "model/build.h"
#include "model/invariants.h"
#include "model/merge.h"
#include "no_resolver.h"
#include "report/annotate.h"

namespace hotline::model {
namespace {

// fib.pl, as perl runs `fib(5)` at line 5 and then `eval "fib(3)"` (at line 6).
constexpr const char* kScript =
    "sub fib {\n"
    "  my $n = shift;\n"
    "  return $n < 2 ? $n : fib($n - 1) + fib($n - 2);\n"
    "}\n"
    "print fib(5), \"\\n\";\n"
    "eval \"fib(3)\";\n";
constexpr const char* kEval = "(eval 1)[fib.pl:6]";

struct Written {
  std::string dir, script, profile;
};

Written WriteProfile() {
  Written w;
  char dir[] = "/tmp/named-frames-XXXXXX";
  EXPECT_NE(mkdtemp(dir), nullptr);
  w.dir = dir;
  w.script = w.dir + "/fib.pl";
  std::ofstream(w.script) << kScript;
  w.profile = w.dir + "/fib.hotline";
  int fd = open(w.profile.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  format::Writer out;
  EXPECT_TRUE(
      out.begin(fd, format::kFeatureSamples | format::kFeatureTrace | format::kFeatureLineCounts));
  uint64_t argv[2] = {out.internString("perl"), out.internString(w.script.c_str())};
  format::ProcessRecord process;
  process.pid = 42;
  process.exe = out.internString("/usr/bin/perl");
  process.argc = 2;
  process.argv = argv;
  process.period_ns = 1;  // the samples' weights are nanoseconds
  process.trace = format::TraceMode::kCounts;
  out.add(process);
  out.add(format::ThreadStartRecord{0, 42, 0, 0});
  // Frames: the main program at lines 5 and 6; fib at lines 2 and 3; the eval's line 1.
  auto frame = [&](uint64_t id, const char* name, const std::string& file, uint64_t line,
                   const std::string& def_file, uint64_t def_line) {
    out.add(format::FrameRecord{id, name, file, line, def_file, def_line, "perl", 0});
    return format::kNamedFrameTag | id;
  };
  uint64_t main5 = frame(1, "main", w.script, 5, w.script, 0);
  uint64_t main6 = frame(2, "main", w.script, 6, w.script, 0);
  uint64_t fib2 = frame(3, "main::fib", w.script, 2, w.script, 1);
  uint64_t fib3 = frame(4, "main::fib", w.script, 3, w.script, 1);
  uint64_t eval1 = frame(5, kEval, kEval, 1, kEval, 1);
  out.add(format::SourceRecord{kEval, "fib(3)\n"});
  // Stacks, outermost first, each level the function at the line it is at.
  uint64_t n_main5 = out.internStackNode(0, main5);
  uint64_t n_fib2 = out.internStackNode(n_main5, fib2);
  uint64_t n_fib3 = out.internStackNode(n_main5, fib3);
  uint64_t n_fib3_3 = out.internStackNode(n_fib3, fib3);
  uint64_t n_fib3_3_2 = out.internStackNode(n_fib3_3, fib2);
  uint64_t n_main6 = out.internStackNode(0, main6);
  uint64_t n_eval = out.internStackNode(n_main6, eval1);
  uint64_t n_eval_fib = out.internStackNode(n_eval, fib3);
  for (auto [node, ns] : {std::pair{n_main5, 100},
                          {n_fib2, 200},
                          {n_fib3, 300},
                          {n_fib3_3, 400},
                          {n_fib3_3_2, 500},
                          {n_main6, 10},
                          {n_eval, 20},
                          {n_eval_fib, 30}})
    out.add(format::SampleRecord{1000, 42, node, uint64_t(ns), 0});
  // Exact statement counts: fib(5) and fib(3) run fib's lines 15 + 5 times.
  uint64_t lines[] = {2, 20, 3, 20, 5, 1, 6, 1};
  out.add(format::LineCountsRecord{w.script, "perl", 4, lines});
  uint64_t eval_lines[] = {1, 1};
  out.add(format::LineCountsRecord{kEval, "perl", 1, eval_lines});
  // Exact calls: the main program calls fib twice (once through the eval), fib itself 18 times.
  out.add(format::TraceFunctionRecord{1, main5});
  out.add(format::TraceFunctionRecord{2, fib2});
  out.add(format::TraceFunctionRecord{3, eval1});
  uint64_t edges[] = {0, 1, 1, 1, 2, 1, 1, 3, 1, 3, 2, 1, 2, 2, 18};
  out.add(format::CallCountsRecord{1100, 42, 6, 5, edges});
  out.add(format::ThreadEndRecord{1200, 42, format::kCpuUnknown});
  out.add(format::EndRecord{1300, format::EndHow::kExit, 0});
  EXPECT_TRUE(out.flush());
  close(fd);
  return w;
}

const Function* Named(const Profile& p, const std::string& name) {
  for (const Function& f : p.functions)
    if (f.name == name) return &f;
  return nullptr;
}

const Line* LineAt(const Profile& p, const std::string& file, uint32_t number) {
  for (const Line& l : p.lines)
    if (p.file(l.file).path == file && l.line == number) return &l;
  return nullptr;
}

TEST(NamedFrames, BuildAProfileWithoutASymbolizer) {
  Written w = WriteProfile();
  NoResolver resolver;
  format::ReadStats stats;
  Expected<Profile> loaded = LoadProfile(w.profile, resolver, {}, &stats);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const Profile& p = *loaded;
  EXPECT_TRUE(CheckInvariants(p).ok()) << CheckInvariants(p).message();
  EXPECT_EQ(p.summary.total_ns, 1560u);

  const Function* fib = Named(p, "main::fib");
  ASSERT_NE(fib, nullptr);
  EXPECT_EQ(p.file(fib->file).path, w.script);
  EXPECT_EQ(fib->line, 1u);
  EXPECT_EQ(fib->self_ns, 1430u);       // every fib frame innermost
  EXPECT_EQ(fib->inclusive_ns, 1430u);  // outermost activations only: recursion counted once
  EXPECT_EQ(fib->calls, 20u);           // 1 + 1 from the main program and the eval, 18 its own
  EXPECT_TRUE(fib->calls_exact);
  const Function* main = Named(p, "main");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->inclusive_ns, 1560u);
  EXPECT_EQ(main->self_ns, 110u);
  EXPECT_EQ(p.module(main->module).path, "perl");

  const Line* line3 = LineAt(p, w.script, 3);
  ASSERT_NE(line3, nullptr);
  EXPECT_EQ(line3->time_ns, 730u);
  EXPECT_EQ(line3->count, 20u);
  EXPECT_TRUE(line3->count_exact);
  EXPECT_EQ(line3->inclusive_ns, 1230u);  // its own and the fib(… − 2) below it, once each
  const Line* eval_line = LineAt(p, kEval, 1);
  ASSERT_NE(eval_line, nullptr);
  EXPECT_EQ(eval_line->time_ns, 20u);
  ASSERT_EQ(p.sources.count(kEval), 1u);
  EXPECT_EQ(p.sources.at(kEval), "fib(3)\n");

  // The call graph: main → fib 1 call at line 5 and fib → fib 18.
  bool recursion_edge = false;
  for (const CallEdge& e : p.calleesOf(FunctionId(uint32_t(fib - p.functions.data()))))
    if (&p.function(e.child) == fib) recursion_edge = e.calls == 18;
  EXPECT_TRUE(recursion_edge);

  // Merged with itself: twice the time and the calls, the source kept.
  Expected<Profile> twice = MergeProfiles({&p, &p});
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(Named(*twice, "main::fib")->calls, 40u);
  EXPECT_EQ(twice->summary.total_ns, 3120u);
  EXPECT_EQ(twice->sources.count(kEval), 1u);
  EXPECT_TRUE(CheckInvariants(*twice).ok());

  // annotate lists the eval from the profile's own copy, the script from disk.
  report::AnnotateOptions options;
  options.all = true;
  std::string out;
  report::AnnotateMessages messages;
  report::PrintAnnotated(p, options, out, messages);
  EXPECT_NE(out.find("fib(3)"), std::string::npos) << out;
  EXPECT_NE(out.find("return $n < 2"), std::string::npos) << out;
  EXPECT_NE(out.find(kEval), std::string::npos) << out;
}

}  // namespace
}  // namespace hotline::model

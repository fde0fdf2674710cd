// `hotline export`, each format opened by its real consumer (DESIGN.md rule 7): callgrind_annotate
// reads the callgrind file, `go tool pprof` the pprof file, and their numbers must be the ones
// `hotline report -m` prints for the same profile. A consumer that is not installed skips its
// test with a message saying which.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace hotline {
namespace {

using testing::Execute;
using testing::Hotline;
using testing::Installed;
using testing::RecordAndCompare;
using testing::Recorded;
using testing::RunResult;
using testing::ScratchDir;

// cpu_burn recorded once for every test here.
const Recorded& CpuBurn() {
  static const Recorded recorded = RecordAndCompare("export_cpu_burn", {PROGRAM_cpu_burn});
  return recorded;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> Fields(const std::string& row, char separator = '\t') {
  std::vector<std::string> fields;
  std::istringstream in(row);
  for (std::string f; std::getline(in, f, separator);) fields.push_back(f);
  return fields;
}

// name → self ns of every function with self time, from `hotline report -C -m`.
std::map<std::string, uint64_t> ReportedSelfTimes(const std::string& profile,
                                                  const std::string& dir) {
  RunResult r = Hotline({"report", "-C", "-m", "--full-names", profile}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, uint64_t> self;
  std::istringstream rows(r.out);
  for (std::string row; std::getline(rows, row);) {
    std::vector<std::string> f = Fields(row);
    if (f.size() >= 6 && std::stoull(f[1]) > 0) self[f[5]] += std::stoull(f[1]);
  }
  return self;
}

// (file, line) → ns of every line of the files whose path ends in one of `files`, from
// `hotline report -L -m -p0`.
std::map<std::pair<std::string, uint32_t>, uint64_t> ReportedLineTimes(
    const std::string& profile, const std::string& dir, const std::vector<std::string>& files) {
  RunResult r = Hotline({"report", "-L", "-m", "-p0", profile}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::pair<std::string, uint32_t>, uint64_t> lines;
  std::istringstream rows(r.out);
  for (std::string row; std::getline(rows, row);) {
    std::vector<std::string> f = Fields(row);
    if (f.size() < 7) continue;
    for (const std::string& file : files)
      if (f[6].ends_with("/" + file) && std::stoull(f[3]) > 0)
        lines[{file, static_cast<uint32_t>(std::stoul(f[1]))}] += std::stoull(f[3]);
  }
  return lines;
}

// The last line of `err`: the error, after warnings about the profile (a library without
// debug info) that depend on the machine.
std::string LastLine(const std::string& err) {
  std::string text = err.ends_with('\n') ? err.substr(0, err.size() - 1) : err;
  size_t newline = text.rfind('\n');
  return newline == std::string::npos ? text : text.substr(newline + 1);
}

TEST(Export, UnknownFormatListsTheKnownOnes) {
  std::string dir = ScratchDir("export_unknown");
  RunResult r = Hotline({"export", "--format", "gprof", CpuBurn().profile, "-o", "out"}, dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "hotline: export: unknown format 'gprof' (known: pprof, callgrind, folded, chrome, "
            "speedscope, json)\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/out"));
}

TEST(Export, AnOptionOfAnotherFormatIsRefused) {
  std::string dir = ScratchDir("export_wrong_option");
  RunResult r =
      Hotline({"export", "--format", "callgrind", "--lines", CpuBurn().profile, "-o", "out"}, dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "hotline: export: --lines is for --format folded, not callgrind\n");
  r = Hotline({"export", "--format", "json", "--heap", CpuBurn().profile, "-o", "out"}, dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "hotline: export: --heap is for --format pprof, not json\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/out"));
}

TEST(Export, UnwritableOutputIsAOneLineErrorAndLeavesNothing) {
  std::string dir = ScratchDir("export_unwritable");
  std::string out = dir + "/missing/out.folded";
  RunResult r = Hotline({"export", "--format", "folded", CpuBurn().profile, "-o", out}, dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(LastLine(r.err), "hotline: export: " + out + ": No such file or directory") << r.err;
}

TEST(Export, MissingDataLeavesTheOldFileAndNoTemporary) {
  // A heap pprof from a profile recorded without --heap: nothing to export.
  std::string dir = ScratchDir("export_no_heap");
  std::string out = dir + "/old.pb.gz";
  std::ofstream(out) << "old";
  RunResult r =
      Hotline({"export", "--format", "pprof", "--heap", CpuBurn().profile, "-o", out}, dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(LastLine(r.err).find("no heap records"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(out), "old");
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1u);
}

// The folded file's weight per innermost frame.
std::map<std::string, uint64_t> FoldedLeaves(const std::string& folded) {
  std::map<std::string, uint64_t> leaves;
  std::istringstream rows(folded);
  for (std::string row; std::getline(rows, row);) {
    size_t space = row.rfind(' ');
    EXPECT_NE(space, std::string::npos) << row;
    if (space == std::string::npos) continue;
    size_t semicolon = row.rfind(';', space);
    std::string leaf = row.substr(semicolon == std::string::npos ? 0 : semicolon + 1,
                                  space - (semicolon == std::string::npos ? 0 : semicolon + 1));
    leaves[leaf] += std::stoull(row.substr(space + 1));
  }
  return leaves;
}

TEST(Export, FoldedStacksAddUpToTheFunctionsSelfTimes) {
  const Recorded& r = CpuBurn();
  std::string out = r.dir + "/cpu_burn.folded";
  RunResult e =
      Hotline({"export", "--format", "folded", "--unit", "ns", r.profile, "-o", out}, r.dir);
  ASSERT_EQ(e.exit_code, 0) << e.err;
  // The innermost frame of each line is the function the time is the self time of.
  EXPECT_EQ(FoldedLeaves(ReadFile(out)), ReportedSelfTimes(r.profile, r.dir));

  // By default each stack counts its samples, as flamegraph.pl expects: as many as -R lists.
  std::string samples = r.dir + "/cpu_burn_samples.folded";
  e = Hotline({"export", "--format", "folded", r.profile, "-o", samples}, r.dir);
  ASSERT_EQ(e.exit_code, 0) << e.err;
  uint64_t folded_samples = 0;
  for (const auto& [leaf, n] : FoldedLeaves(ReadFile(samples))) folded_samples += n;
  RunResult raw = Hotline({"report", "-R", "-m", r.profile}, r.dir);
  ASSERT_EQ(raw.exit_code, 0) << raw.err;
  EXPECT_EQ(folded_samples, uint64_t(std::count(raw.out.begin(), raw.out.end(), '\n')));
  EXPECT_GT(folded_samples, 0u);
  RunResult wrong = Hotline(
      {"export", "--format", "pprof", "--unit", "ns", r.profile, "-o", r.dir + "/x.pb.gz"}, r.dir);
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_EQ(LastLine(wrong.err), "hotline: export: --unit is for --format folded, not pprof");
  EXPECT_NE(ReadFile(out).find(";main;burn_cpu;"), std::string::npos);

  std::string with_lines = r.dir + "/cpu_burn_lines.folded";
  e = Hotline({"export", "--format", "folded", "--lines", r.profile, "-o", with_lines}, r.dir);
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_TRUE(
      std::regex_search(ReadFile(with_lines), std::regex(R"(;burn_cpu \(burn\.h:\d+\) \d+)")))
      << ReadFile(with_lines);
}

// callgrind_annotate's annotated sources: (file, line) → the shown event's cost of every line with
// one, for the files whose path ends in one of `files`. Rows are `COST  SOURCE`, `COST  => callee
// (Nx)` for calls, and `-- line N ---` where unannotated lines were skipped.
std::map<std::pair<std::string, uint32_t>, uint64_t> AnnotatedLineCosts(
    const std::string& annotated, const std::vector<std::string>& files) {
  std::map<std::pair<std::string, uint32_t>, uint64_t> lines;
  std::string file;  // "" outside the sources asked for
  uint32_t line = 0;
  std::istringstream rows(annotated);
  std::smatch m;
  static const std::regex source_header(R"(^-- Auto-annotated source: (.*)$)");
  static const std::regex skipped(R"(^-- line (\d+) -+)");
  static const std::regex cost_row(R"(^ *([0-9,]+|\.) (.*)$)");
  for (std::string row; std::getline(rows, row);) {
    if (std::regex_match(row, m, source_header)) {
      file.clear();
      line = 0;
      for (const std::string& f : files)
        if (m[1].str().ends_with(f)) file = f;
      continue;
    }
    if (file.empty()) continue;
    if (row.starts_with("-----") && line > 0) {
      file.clear();  // the end of the source: a summary follows
      continue;
    }
    if (std::regex_search(row, m, skipped)) {
      line = static_cast<uint32_t>(std::stoul(m[1])) - 1;
      continue;
    }
    if (!std::regex_match(row, m, cost_row)) continue;
    std::string rest = m[2];
    if (rest.find_first_not_of(' ') != std::string::npos &&
        rest.substr(rest.find_first_not_of(' ')).starts_with("=> "))
      continue;  // a call's inclusive cost, not a line of its own
    ++line;
    std::string cost = m[1];
    if (cost == ".") continue;
    std::erase(cost, ',');
    lines[{file, line}] += std::stoull(cost);
  }
  return lines;
}

TEST(Export, CallgrindAnnotateShowsTheReportsLineTimes) {
  if (!Installed("callgrind_annotate"))
    GTEST_SKIP() << "callgrind_annotate (Debian's valgrind) is not installed";
  const Recorded& r = CpuBurn();
  std::string out = r.dir + "/callgrind.out.cpu_burn";
  RunResult e = Hotline({"export", "--format", "callgrind", r.profile, "-o", out}, r.dir);
  ASSERT_EQ(e.exit_code, 0) << e.err;
  RunResult annotated = Execute({"/usr/bin/env", "callgrind_annotate", "--auto=yes",
                                 "--show-percs=no", "--context=100000", out},
                                r.dir);
  ASSERT_EQ(annotated.exit_code, 0) << annotated.err;
  EXPECT_EQ(annotated.err.find("WARNING"), std::string::npos) << annotated.err;
  std::vector<std::string> sources = {"cpu_burn.c", "burn.h"};
  auto expected = ReportedLineTimes(r.profile, r.dir, sources);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(AnnotatedLineCosts(annotated.out, sources), expected) << annotated.out;
  // And the total: every nanosecond of the profile.
  RunResult summary = Hotline({"report", "-C", "-m", r.profile}, r.dir);
  uint64_t total = 0;
  for (const auto& [name, ns] : ReportedSelfTimes(r.profile, r.dir)) total += ns;
  std::string totals = std::to_string(total);
  for (size_t i = totals.size(); i > 3; i -= 3) totals.insert(i - 3, ",");
  EXPECT_NE(annotated.out.find(totals + "  PROGRAM TOTALS"), std::string::npos) << totals << "\n"
                                                                                << annotated.out;
}

TEST(Export, CallgrindCarriesExactCountsAsASecondEvent) {
  if (!Installed("callgrind_annotate"))
    GTEST_SKIP() << "callgrind_annotate (Debian's valgrind) is not installed";
  if (!Installed("gcc")) GTEST_SKIP() << "gcc is not installed";
  std::string dir = ScratchDir("export_counts");
  RunResult built = Execute(
      {"/usr/bin/env", "gcc", "-O0", "-g", "--coverage", "-o", dir + "/counted", SOURCE_coverage_c},
      dir);
  ASSERT_EQ(built.exit_code, 0) << built.err;
  std::string profile = dir + "/counted.hotline";
  ASSERT_EQ(Hotline({"record", "-q", "-o", profile, "--", dir + "/counted"}, dir).exit_code, 0);
  std::string out = dir + "/callgrind.out.counted";
  RunResult e = Hotline({"export", "--format", "callgrind", profile, "-o", out}, dir);
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(ReadFile(out).find("\nevents: ns count\n"), std::string::npos);
  RunResult annotated =
      Execute({"/usr/bin/env", "callgrind_annotate", "--auto=yes", "--show-percs=no",
               "--show=count", "--sort=count", "--threshold=100", "--context=100000", out},
              dir);
  ASSERT_EQ(annotated.exit_code, 0) << annotated.err;
  // The counts `hotline annotate -m` gives every executed line (gcov's, checked in
  // coverage_test): fib(20) runs its first line 21891 times.
  RunResult listing = Hotline({"annotate", "-m", profile}, dir);
  ASSERT_EQ(listing.exit_code, 0) << listing.err;
  std::map<std::pair<std::string, uint32_t>, uint64_t> expected;
  std::istringstream rows(listing.out);
  for (std::string row; std::getline(rows, row);) {
    std::vector<std::string> f = Fields(row);
    if (f.size() >= 3 && f[0].ends_with("/coverage_c.c") && !f[2].empty() && f[2] != "0")
      expected[{"coverage_c.c", static_cast<uint32_t>(std::stoul(f[1]))}] = std::stoull(f[2]);
  }
  ASSERT_EQ(expected[std::make_pair(std::string("coverage_c.c"), 7u)], 21891u) << listing.out;
  EXPECT_EQ(AnnotatedLineCosts(annotated.out, {"coverage_c.c"}), expected) << annotated.out;
}

// `go tool pprof` offline, its caches in a scratch directory.
RunResult GoPprof(const std::vector<std::string>& args, const std::string& dir) {
  std::vector<std::string> argv = {"/usr/bin/env",
                                   "HOME=" + dir,
                                   "GOCACHE=" + dir + "/gocache",
                                   "GOPROXY=off",
                                   "GOFLAGS=",
                                   "GOTOOLCHAIN=local",
                                   "PPROF_TMPDIR=" + dir,
                                   "go",
                                   "tool",
                                   "pprof"};
  argv.insert(argv.end(), args.begin(), args.end());
  return Execute(argv, dir);
}

// name → flat of every row of `go tool pprof -top -unit=ns` with a flat time.
std::map<std::string, uint64_t> PprofFlat(const std::string& top) {
  std::map<std::string, uint64_t> flat;
  static const std::regex row(R"(^ *(\d+)(ns|B)? +[\d.]+% +[\d.]+% +\d+(ns|B)? +[\d.]+% +(.*)$)");
  std::istringstream rows(top);
  std::smatch m;
  for (std::string line; std::getline(rows, line);)
    if (std::regex_match(line, m, row) && std::stoull(m[1]) > 0) {
      // pprof marks a function whose code was inlined where it was sampled.
      std::string name = m[4];
      if (name.ends_with(" (inline)")) name.resize(name.size() - 9);
      flat[name] += std::stoull(m[1]);
    }
  return flat;
}

TEST(Export, GoToolPprofShowsTheReportsSelfTimes) {
  if (!Installed("go")) GTEST_SKIP() << "go (Debian's golang-go) is not installed";
  const Recorded& r = CpuBurn();
  std::string out = r.dir + "/cpu_burn.pb.gz";
  RunResult e = Hotline({"export", "--format", "pprof", r.profile, "-o", out}, r.dir);
  ASSERT_EQ(e.exit_code, 0) << e.err;
  RunResult top = GoPprof({"-top", "-nodecount=1000", "-nodefraction=0", "-unit=ns", out}, r.dir);
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_EQ(PprofFlat(top.out), ReportedSelfTimes(r.profile, r.dir)) << top.out;
  EXPECT_NE(top.out.find("Build ID: "), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("File: test_cpu_burn"), std::string::npos) << top.out;
  // When the run began, as wall-clock time (pprof's time_nanos): this year, not 1970.
  time_t now = time(nullptr);
  char year[8];
  strftime(year, sizeof year, "%Y", gmtime(&now));
  EXPECT_NE(top.out.find(std::string(", ") + year + " at "), std::string::npos) << top.out;
  // Inclusive time through the stacks: heavy's cumulative time is its inclusive time.
  RunResult raw = GoPprof({"-raw", out}, r.dir);
  ASSERT_EQ(raw.exit_code, 0) << raw.err;
  EXPECT_NE(raw.out.find("thread:["), std::string::npos) << raw.out;
  // burn_cpu's inlined call of thread_cpu_seconds: two lines of one location, the inlined
  // function first, its caller on the continuation line.
  EXPECT_TRUE(std::regex_search(
      raw.out,
      std::regex(R"(\n +\d+: 0x[0-9a-f]+ M=\d+ thread_cpu_seconds \S+burn\.h:\d+ s=\d+\n +)"
                 R"(burn_cpu \S+burn\.h:\d+ s=\d+\n)")))
      << raw.out;
}

void ExpectValidJson(const std::string& profile, const std::string& dir, const std::string& name) {
  std::string out = dir + "/" + name + ".json";
  RunResult e = Hotline({"export", "--format", "json", profile, "-o", out}, dir);
  ASSERT_EQ(e.exit_code, 0) << e.err;
  RunResult valid =
      Execute({"/usr/bin/python3", HOTLINE_SOURCE_DIR "/tests/programs/validate_export_json.py",
               HOTLINE_SOURCE_DIR "/docs/export-schema.json", out},
              dir);
  if (valid.exit_code == 2) GTEST_SKIP() << valid.err;
  EXPECT_EQ(valid.exit_code, 0) << valid.err;
}

TEST(Export, JsonIsValidAgainstItsSchema) {
  if (!Installed("/usr/bin/python3")) GTEST_SKIP() << "python3 is not installed";
  const Recorded& r = CpuBurn();
  ExpectValidJson(r.profile, r.dir, "cpu_burn");
  std::string json = ReadFile(r.dir + "/cpu_burn.json");
  EXPECT_NE(json.find("\"name\": \"burn_cpu\""), std::string::npos);
  EXPECT_NE(json.find("\"heap\": null"), std::string::npos);
}

TEST(Export, JsonCarriesTheHeapSummary) {
  if (!Installed("/usr/bin/python3")) GTEST_SKIP() << "python3 is not installed";
  std::string dir = ScratchDir("export_heap_json");
  std::string profile = dir + "/heap.hotline";
  RunResult rec = Hotline({"record", "-q", "--heap", "-o", profile, "--", PROGRAM_heap_known}, dir);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  ExpectValidJson(profile, dir, "heap");
  // heap_known's allocations, counted by hand in heap_test.
  EXPECT_NE(ReadFile(dir + "/heap.json").find("\"alloc_calls\": 118"), std::string::npos);
}

// The function `hotline report -C -m` lists first: the largest self time.
std::string ReportedTopFunction(const std::string& profile, const std::string& dir) {
  RunResult r = Hotline({"report", "-C", "-m", "--full-names", profile}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> first = Fields(r.out.substr(0, r.out.find('\n')));
  return first.size() >= 6 ? first[5] : "";
}

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Exports `profile` in each (format, file name) into `dir` and opens every file in speedscope's
// own app in headless Chromium; checks that speedscope's top function is `top` in each. Skips
// (returns false) when the browser or the npm packages are not there.
bool ExpectSpeedscopeTop(const std::string& profile, const std::string& dir,
                         const std::vector<std::pair<std::string, std::string>>& files,
                         const std::string& top, std::string* skip) {
  if (!Installed("node") || !Installed("npm") || !Installed("chromium")) {
    *skip = "node, npm or chromium (Debian's nodejs, npm, chromium) is not installed";
    return false;
  }
  std::string modules = HTML_NODE_DIR;
  RunResult installed = Execute({"/bin/bash", HTML_BROWSER_DIR "/install.sh", modules}, dir);
  if (installed.exit_code != 0) {
    *skip = "speedscope and puppeteer-core could not be installed from npm: " + installed.err;
    return false;
  }
  std::vector<std::string> argv = {"/usr/bin/env", "node",
                                   HOTLINE_SOURCE_DIR "/tests/consumers/speedscope_import.js",
                                   modules + "/node_modules", "/usr/bin/env"};
  RunResult chromium = Execute({"/bin/sh", "-c", "command -v chromium"}, dir);
  argv.back() = chromium.out.substr(0, chromium.out.find('\n'));
  for (const auto& [format, name] : files) {
    RunResult e = Hotline({"export", "--format", format, profile, "-o", name}, dir);
    EXPECT_EQ(e.exit_code, 0) << format << ": " << e.err;
    argv.push_back(dir + "/" + name);
  }
  RunResult opened = Execute(argv, dir);
  EXPECT_EQ(opened.exit_code, 0) << opened.out << opened.err;
  for (const auto& [format, name] : files)
    EXPECT_NE(opened.out.find(dir + "/" + name + "\tTOP\t" + top + "\n"), std::string::npos)
        << format << ": speedscope's top function is not " << top << "\n"
        << opened.out << opened.err;
  return true;
}

TEST(Export, SpeedscopeImportsEveryFormatItReads) {
  const Recorded& r = CpuBurn();
  std::string top = ReportedTopFunction(r.profile, r.dir);
  ASSERT_FALSE(top.empty());
  // speedscope picks its importer by name, then by content: .speedscope.json is its own
  // format; the others are recognised by what they hold. It reads pprof and callgrind as well:
  // a second reader of each.
  std::string skip;
  if (!ExpectSpeedscopeTop(r.profile, r.dir,
                           {{"speedscope", "cpu_burn.speedscope.json"},
                            {"folded", "cpu_burn.folded.txt"},
                            {"chrome", "cpu_burn.trace.json"},
                            {"pprof", "cpu_burn.pb.gz"},
                            {"callgrind", "callgrind.out.cpu_burn"}},
                           top, &skip))
    GTEST_SKIP() << skip;
}

// A timed trace's calls are events of their own: one complete chrome event and one speedscope
// open/close pair per call, as many as the exact calls, and speedscope reads both.
TEST(Export, TimedTraceCallsAreEventsOfTheirOwn) {
  std::string dir = ScratchDir("export_timed");
  std::string profile = dir + "/fib.hotline";
  RunResult rec = Hotline(
      {"record", "-q", "--trace=timed", "-F", "0", "-o", profile, "--", PROGRAM_trace_fib, "20"},
      dir);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  for (const char* format : {"chrome", "speedscope"}) {
    RunResult e = Hotline({"export", "--format", format, profile, "-o", std::string(format)}, dir);
    ASSERT_EQ(e.exit_code, 0) << e.err;
  }
  // fib(20) calls fib 21891 times, and main once.
  std::string chrome = ReadFile(dir + "/chrome"), speedscope = ReadFile(dir + "/speedscope");
  EXPECT_EQ(Occurrences(chrome, "\"ph\":\"X\""), 21892u);
  EXPECT_EQ(Occurrences(speedscope, "\"type\":\"O\""), 21892u);
  EXPECT_EQ(Occurrences(speedscope, "\"type\":\"C\""), 21892u);
  EXPECT_NE(speedscope.find("\"type\":\"evented\""), std::string::npos);
  // Which of main and fib holds more self time is the machine's to decide (a busy machine
  // descheduled main): speedscope must read the one hotline's own report puts first.
  RunResult procedures = Hotline({"report", "-P", profile}, dir);
  ASSERT_EQ(procedures.exit_code, 0) << procedures.err;
  std::string top;
  double top_self = -1;
  std::istringstream rows(procedures.out);
  std::string row;
  std::getline(rows, row);  // the title
  std::getline(rows, row);  // the column names
  while (std::getline(rows, row) && !row.empty()) {
    std::istringstream words(row);
    std::vector<std::string> f{std::istream_iterator<std::string>(words), {}};
    ASSERT_EQ(f.size(), 9u) << row;
    if (std::stod(f[6]) > top_self) top_self = std::stod(f[6]), top = f[8];
  }
  ASSERT_FALSE(top.empty()) << procedures.out;
  std::string skip;
  if (!ExpectSpeedscopeTop(profile, dir,
                           {{"speedscope", "fib.speedscope.json"}, {"chrome", "fib.trace.json"}},
                           top, &skip))
    GTEST_SKIP() << skip;
}

TEST(Export, EveryThreadIsAProfileOrAStackRootOfItsOwn) {
  Recorded r = RecordAndCompare("export_threads", {PROGRAM_threads});
  for (const char* format : {"speedscope", "chrome"}) {
    RunResult e = Hotline({"export", "--format", format, r.profile, "-o", format}, r.dir);
    ASSERT_EQ(e.exit_code, 0) << e.err;
  }
  RunResult e = Hotline(
      {"export", "--format", "folded", "--threads", r.profile, "-o", "threads.folded"}, r.dir);
  ASSERT_EQ(e.exit_code, 0) << e.err;
  // Four workers burning 0.25 s each: a sampled profile each, the named one by its name.
  std::string speedscope = ReadFile(r.dir + "/speedscope");
  EXPECT_GE(Occurrences(speedscope, "\"type\":\"sampled\""), 4u) << speedscope;
  EXPECT_NE(speedscope.find("\"name\":\"worker-zero (thread "), std::string::npos);
  std::string chrome = ReadFile(r.dir + "/chrome");
  EXPECT_NE(chrome.find("\"args\":{\"name\":\"worker-zero\"},\"name\":\"thread_name\""),
            std::string::npos);
  std::set<std::string> tids;
  std::smatch m;
  // The process's own pid (Perfetto's process track), each thread's tid.
  static const std::regex begin(R"re("ph":"B","pid":(\d+),"tid":(\d+))re");
  for (auto it = std::sregex_iterator(chrome.begin(), chrome.end(), begin);
       it != std::sregex_iterator(); ++it) {
    EXPECT_NE((*it)[1], "1");
    tids.insert((*it)[2]);
  }
  EXPECT_GE(tids.size(), 4u);
  std::string folded = ReadFile(r.dir + "/threads.folded");
  EXPECT_TRUE(std::regex_search(
      folded, std::regex(R"(^thread \d+ worker-zero;.*burn_cpu)", std::regex::multiline)))
      << folded;
}

TEST(Export, PprofCarriesTheMarksAsComments) {
  if (!Installed("go")) GTEST_SKIP() << "go (Debian's golang-go) is not installed";
  Recorded r = RecordAndCompare("export_marks", {PROGRAM_paused});
  RunResult e = Hotline({"export", "--format", "pprof", r.profile, "-o", "marks.pb.gz"}, r.dir);
  ASSERT_EQ(e.exit_code, 0) << e.err;
  RunResult raw = GoPprof({"-raw", "marks.pb.gz"}, r.dir);
  ASSERT_EQ(raw.exit_code, 0) << raw.err;
  EXPECT_TRUE(
      std::regex_search(raw.out, std::regex(R"(Comment: mark "work" at [\d.]+ ms, thread \d+)")))
      << raw.out;
}

TEST(Export, ChromeNeedsSamplesWithTimes) {
  // A counts-only profile has line counts but no samples: no trace to draw.
  std::string dir = ScratchDir("export_chrome_no_samples");
  std::string profile = dir + "/empty.hotline";
  RunResult rec =
      Hotline({"record", "-q", "--start-paused", "-o", profile, "--", "/bin/true"}, dir);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  RunResult e = Hotline({"export", "--format", "chrome", profile, "-o", "out.json"}, dir);
  EXPECT_EQ(e.exit_code, 1);
  EXPECT_NE(LastLine(e.err).find("no timed samples or traced calls"), std::string::npos) << e.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.json"));
}

TEST(Export, GoToolPprofShowsTheHeapTotals) {
  if (!Installed("go")) GTEST_SKIP() << "go (Debian's golang-go) is not installed";
  std::string dir = ScratchDir("export_heap_pprof");
  std::string profile = dir + "/heap.hotline";
  RunResult rec = Hotline({"record", "-q", "--heap", "-o", profile, "--", PROGRAM_heap_known}, dir);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  RunResult e =
      Hotline({"export", "--format", "pprof", "--heap", profile, "-o", "heap.pb.gz"}, dir);
  ASSERT_EQ(e.exit_code, 0) << e.err;
  // heap_known's allocations, counted by hand in heap_test: 118 blocks, these bytes, 11 leaked.
  uint64_t bytes = 1000u + 48 + 100 * 32 + 16 + 64 + 256 + 64 + 128 + 100 + (1u << 20);
  // Bytes in bytes (-unit=B), not kB; counts as they are.
  std::map<std::string, std::string> totals = {{"alloc_objects", "118 total"},
                                               {"alloc_space", std::to_string(bytes) + "B total"},
                                               {"inuse_objects", "11 total"},
                                               {"inuse_space", "1048B total"}};
  for (const auto& [index, total] : totals) {
    std::string unit = index.ends_with("_space") ? "-unit=B" : "-unit=minimum";
    RunResult top = GoPprof({"-top", unit, "-sample_index=" + index, "heap.pb.gz"}, dir);
    ASSERT_EQ(top.exit_code, 0) << top.err;
    EXPECT_NE(top.out.find(total), std::string::npos) << index << "\n" << top.out;
  }
}

}  // namespace
}  // namespace hotline

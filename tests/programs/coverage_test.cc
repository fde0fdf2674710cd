// Exact line counts of --coverage builds: every count hotline records equals what gcov itself
// reports for the same run, the never-executed lines equal gcov's ##### lines, the user's own
// .gcda files are left alone, and the annotated listing shows them.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>

#include "harness.h"

namespace hotline {
namespace {

using testing::Execute;
using testing::Hotline;
using testing::Load;
using testing::RunResult;
using testing::ScratchDir;

// Builds `source` with --coverage in a fresh directory; returns the directory.
std::string Build(const std::string& source, const std::string& compiler, const std::string& name) {
  std::string dir = ScratchDir(name);
  RunResult r = Execute(
      {"/usr/bin/env", compiler, "-O0", "-g", "--coverage", "-o", dir + "/" + name, source}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return dir;
}

// gcov's own text output for `source` after a plain run: line → count; -1 for "#####".
std::map<uint64_t, int64_t> GcovCounts(const std::string& dir, const std::string& source,
                                       const std::string& name) {
  // gcc names the notes of `gcc --coverage -o NAME SOURCE` NAME-SOURCE.gcno.
  std::string stem = source.substr(source.rfind('/') + 1);
  stem = name + "-" + stem.substr(0, stem.rfind('.'));
  RunResult g = Execute({"/usr/bin/env", "gcov", stem + ".gcda"}, dir);
  EXPECT_EQ(g.exit_code, 0) << g.err;
  std::string base = source.substr(source.rfind('/') + 1);
  std::ifstream in(dir + "/" + base + ".gcov");
  std::map<uint64_t, int64_t> counts;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string count, number;
    std::getline(fields, count, ':');
    std::getline(fields, number, ':');
    count.erase(0, count.find_first_not_of(' '));
    if (count == "-" || count.empty()) continue;
    if (count.back() == '*') count.pop_back();  // a line partly executed
    uint64_t n = std::strtoull(number.c_str(), nullptr, 10);
    counts[n] =
        count == "#####" || count == "=====" ? -1 : std::strtoll(count.c_str(), nullptr, 10);
  }
  return counts;
}

void ExpectCountsEqualGcov(const std::string& source, const std::string& compiler,
                           const std::string& name) {
  // One build run plain (for gcov) and a copy of it run under hotline.
  std::string plain_dir = Build(source, compiler, name + "-plain");
  ASSERT_EQ(Execute({plain_dir + "/" + name + "-plain"}, plain_dir).exit_code, 0);
  std::map<uint64_t, int64_t> gcov = GcovCounts(plain_dir, source, name + "-plain");
  ASSERT_FALSE(gcov.empty());

  std::string dir = Build(source, compiler, name);
  std::string profile = dir + "/p.hotline";
  RunResult r = Hotline({"record", "-q", "-o", profile, "--", dir + "/" + name}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // hotline sent this run's counts elsewhere: the program's own .gcda was not written.
  std::string stem = source.substr(source.rfind('/') + 1);
  std::string gcda = dir + "/" + name + "-" + stem.substr(0, stem.rfind('.')) + ".gcda";
  struct stat st {};
  EXPECT_NE(stat(gcda.c_str(), &st), 0) << gcda << " was written";

  format::RawProfile p = Load(profile);
  std::map<uint64_t, int64_t> recorded;
  for (const auto& file : p.line_counts)
    if (file.file == source)
      for (const auto& [line, count] : file.lines)
        recorded[line] = count == 0 ? -1 : int64_t(count);
  EXPECT_EQ(recorded, gcov);

  // The listing marks exactly gcov's ##### lines as never executed.
  RunResult listing = Hotline({"annotate", "-m", profile}, dir);
  ASSERT_EQ(listing.exit_code, 0) << listing.err;
  std::map<uint64_t, int64_t> annotated;
  std::istringstream in(listing.out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string file, number, count;
    std::getline(fields, file, '\t');
    std::getline(fields, number, '\t');
    std::getline(fields, count, '\t');
    if (file != source || count.empty()) continue;
    int64_t n = std::strtoll(count.c_str(), nullptr, 10);
    annotated[std::strtoull(number.c_str(), nullptr, 10)] = n == 0 ? -1 : n;
  }
  EXPECT_EQ(annotated, gcov);
}

TEST(Coverage, CCountsEqualGcovOnEveryLine) {
  ExpectCountsEqualGcov(SOURCE_coverage_c, "gcc", "coverage_c");
}

TEST(Coverage, CppCountsEqualGcovOnEveryLine) {
  ExpectCountsEqualGcov(SOURCE_coverage_cpp, "g++", "coverage_cpp");
}

TEST(Coverage, KnownCountsAndTheListing) {
  std::string dir = Build(SOURCE_coverage_c, "gcc", "known");
  std::string profile = dir + "/p.hotline";
  ASSERT_EQ(
      Hotline({"record", "-q", "-F", "0", "-o", profile, "--", dir + "/known"}, dir).exit_code, 0);
  format::RawProfile p = Load(profile);
  std::map<std::string, uint64_t> functions;
  for (const auto& f : p.function_counts) functions[f.name] = f.executions;
  EXPECT_EQ(functions["square"], 100u);
  EXPECT_EQ(functions["fib"], 21891u);  // 2·fib(21) − 1
  EXPECT_EQ(functions["never_called"], 0u);
  RunResult listing = Hotline({"annotate", "--no-color", profile}, dir);
  ASSERT_EQ(listing.exit_code, 0) << listing.err;
  EXPECT_NE(listing.out.find("#####"), std::string::npos);
  EXPECT_NE(listing.out.find("-- fib: "), std::string::npos);
  EXPECT_NE(listing.out.find("calls 21891"), std::string::npos) << listing.out;
  EXPECT_NE(listing.out.find("Never executed\n" + std::string(SOURCE_coverage_c) + ": "),
            std::string::npos)
      << listing.out;
}

// The index of `hotline annotate` for a counts-only profile: function → (explicit, implicit).
std::map<std::string, std::pair<double, double>> CostIndex(const std::string& listing) {
  std::map<std::string, std::pair<double, double>> costs;
  std::istringstream in(listing);
  std::string line;
  std::getline(in, line);  // title
  std::getline(in, line);  // header
  // Aligned columns: self, %, inclusive, %, calls, then the name (which may hold spaces).
  while (std::getline(in, line) && !line.empty()) {
    std::istringstream fields(line);
    double self, self_percent, inclusive, inclusive_percent;
    uint64_t calls;
    std::string name;
    if (!(fields >> self >> self_percent >> inclusive >> inclusive_percent >> calls)) break;
    std::getline(fields >> std::ws, name);
    costs[name] = {self, inclusive};
  }
  return costs;
}

// Runs read as one add up: three runs of the counting program make exactly three times the
// calls, still exact.
TEST(Coverage, RunsReadAsOneAddTheirExactCalls) {
  std::string dir = Build(SOURCE_coverage_c, "gcc", "runs");
  std::vector<std::string> command = {"report", "-M", "-m"};
  for (int run = 1; run <= 3; ++run) {
    std::string profile = dir + "/run" + std::to_string(run) + ".hotline";
    ASSERT_EQ(Hotline({"record", "-q", "--counts-only", "-o", profile, "--", dir + "/runs"}, dir)
                  .exit_code,
              0);
    command.push_back(profile);
  }
  RunResult merged = Hotline(command, dir);
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  // -M -m: file, line, calls, self, cumulative, name (then, for several runs, the spreads).
  std::map<std::string, std::string> calls;
  std::istringstream rows(merged.out);
  for (std::string row; std::getline(rows, row);) {
    std::vector<std::string> cells;
    std::istringstream fields(row);
    for (std::string cell; std::getline(fields, cell, '\t');) cells.push_back(cell);
    if (cells.size() >= 6) calls[cells[5]] = cells[2];
  }
  EXPECT_EQ(calls["fib"], "65673") << merged.out;  // 3 × 21891
  EXPECT_EQ(calls["square"], "300") << merged.out;
  EXPECT_EQ(calls["main"], "3") << merged.out;
  RunResult people = Hotline({"report", "-M", command[3], command[4]}, dir);
  EXPECT_EQ(people.out.find("~"), std::string::npos) << "exact calls stay exact: " << people.out;

  // Runs of another program are refused, unless forced.
  std::string other = dir + "/other.hotline";
  ASSERT_EQ(Hotline({"record", "-q", "-o", other, "--", PROGRAM_cpu_burn}, dir).exit_code, 3);
  RunResult refused = Hotline({"report", "-M", command[3], other}, dir);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("profiles of different programs"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--force"), std::string::npos) << refused.err;
  EXPECT_EQ(Hotline({"report", "-M", "--force", command[3], other}, dir).exit_code, 0);
}

// hotline merge: runs in one file that every command reads as their sum, whatever the grouping.
TEST(Coverage, MergedFilesAreTheSumWhateverTheGrouping) {
  std::string dir = Build(SOURCE_coverage_c, "gcc", "merge");
  std::vector<std::string> runs;
  for (int run = 1; run <= 3; ++run) {
    runs.push_back(dir + "/run" + std::to_string(run) + ".hotline");
    ASSERT_EQ(
        Hotline({"record", "-q", "--counts-only", "-o", runs.back(), "--", dir + "/merge"}, dir)
            .exit_code,
        0);
  }
  auto merge = [&](const std::string& out, std::vector<std::string> files) {
    files.insert(files.begin(), {"merge", "-o", dir + "/" + out});
    RunResult r = Hotline(files, dir);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return dir + "/" + out;
  };
  std::string ab_c = merge("ab_c.hotline", {merge("ab.hotline", {runs[0], runs[1]}), runs[2]});
  std::string a_bc = merge("a_bc.hotline", {runs[0], merge("bc.hotline", {runs[1], runs[2]})});
  std::string cba = merge("cba.hotline", {runs[2], runs[1], runs[0]});
  auto tables = [&](const std::string& profile) {
    RunResult r = Hotline({"report", "-M", "-L", "-F", "-m", "-p0", profile}, dir);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  std::string expected = tables(ab_c);
  EXPECT_NE(expected.find("\t65673\t"), std::string::npos) << expected;  // 3 × fib's 21891
  EXPECT_EQ(tables(a_bc), expected);
  EXPECT_EQ(tables(cba), expected);
  // The same as naming the runs to report.
  RunResult named =
      Hotline({"report", "-M", "-L", "-F", "-m", "-p0", runs[0], runs[1], runs[2]}, dir);
  EXPECT_EQ(named.out, expected);

  // Bad input: another program, a missing file, the output among the inputs; no file left.
  std::string other = dir + "/other.hotline";
  ASSERT_EQ(Hotline({"record", "-q", "-o", other, "--", PROGRAM_cpu_burn}, dir).exit_code, 3);
  RunResult refused = Hotline({"merge", "-o", dir + "/no.hotline", runs[0], other}, dir);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("is a profile of another program"), std::string::npos) << refused.err;
  EXPECT_NE(
      Hotline({"merge", "-o", dir + "/no.hotline", runs[0], dir + "/none.hotline"}, dir).exit_code,
      0);
  EXPECT_EQ(Hotline({"merge", "-o", runs[0], runs[0], runs[1]}, dir).exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(dir + "/no.hotline"));
}

// merge --children: a run and its forked children's profiles as one.
TEST(Coverage, MergeTakesAForkedRunsChildren) {
  std::string dir = ScratchDir("merge_children");
  std::string parent = dir + "/f.hotline";
  ASSERT_EQ(Hotline({"record", "-q", "-o", parent, "--", PROGRAM_forker}, dir).exit_code, 0);
  RunResult merged = Hotline({"merge", "--children", "-o", dir + "/all.hotline", parent}, dir);
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  EXPECT_NE(merged.err.find("merged 2 runs"), std::string::npos) << merged.err;
  RunResult report = Hotline({"report", "-N", dir + "/all.hotline"}, dir);
  EXPECT_EQ(report.exit_code, 0) << report.err;
  // A bare name, relative to where merge runs, finds the children beside it too.
  RunResult bare = Hotline({"merge", "--children", "-o", "bare.hotline", "f.hotline"}, dir);
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_NE(bare.err.find("merged 2 runs"), std::string::npos) << bare.err;
}

TEST(Coverage, ImplicitCostsFromCountsSolveTheRecursion) {
  std::string dir = Build(SOURCE_coverage_c, "gcc", "costs");
  std::string profile = dir + "/p.hotline";
  ASSERT_EQ(Hotline({"record", "-q", "--counts-only", "-o", profile, "--", dir + "/costs"}, dir)
                .exit_code,
            0);
  RunResult listing = Hotline({"annotate", "--no-color", "-p0", profile}, dir);
  ASSERT_EQ(listing.exit_code, 0) << listing.err;
  auto costs = CostIndex(listing.out);
  ASSERT_TRUE(costs.count("fib") && costs.count("main") && costs.count("square")) << listing.out;
  // Worked by hand: fib is called once from outside its recursion, so the linear system
  // x_fib = c_fib + (21890/21891)·x_fib gives x_fib = 21891·c_fib, charged once: its explicit cost.
  EXPECT_NEAR(costs["fib"].second, costs["fib"].first, 1e-6 * costs["fib"].first);
  // square calls nothing; main calls everything once through: its implicit cost is the total.
  EXPECT_NEAR(costs["square"].second, costs["square"].first, 1e-6 * costs["square"].first + 1e-9);
  double total = costs["main"].first + costs["fib"].first + costs["square"].first +
                 costs["never_called"].first;
  EXPECT_NEAR(costs["main"].second, total, 1e-6 * total);
  EXPECT_GT(costs["fib"].first, 0);
}

TEST(Coverage, MutualRecursionIsOneCycle) {
  std::string dir = Build(SOURCE_trace_mutual, "gcc", "cycle");
  std::string profile = dir + "/p.hotline";
  ASSERT_EQ(Hotline({"record", "-q", "--counts-only", "-o", profile, "--", dir + "/cycle"}, dir)
                .exit_code,
            0);
  RunResult listing = Hotline({"annotate", "--no-color", "-p0", profile}, dir);
  ASSERT_EQ(listing.exit_code, 0) << listing.err;
  auto costs = CostIndex(listing.out);
  // is_even and is_odd call each other: one cycle entered once from main, whose cost both
  // members show, as gprof shows cycles; main's is everything.
  std::string even = "is_even <cycle 1>", odd = "is_odd <cycle 1>";
  ASSERT_TRUE(costs.count(even) && costs.count(odd)) << listing.out;
  double cycle = costs[even].first + costs[odd].first;
  EXPECT_NEAR(costs[even].second, cycle, 1e-6 * cycle);
  EXPECT_NEAR(costs[odd].second, cycle, 1e-6 * cycle);
  EXPECT_NEAR(costs["main"].second, costs["main"].first + cycle, 1e-6 * cycle);
}

TEST(Coverage, ClangProfileInstrGenerate) {
  if (system("command -v clang >/dev/null && command -v llvm-cov >/dev/null && "
             "command -v llvm-profdata >/dev/null") != 0)
    GTEST_SKIP() << "clang or llvm-cov is not installed";
  std::string dir = ScratchDir("clang");
  ASSERT_EQ(Execute({"/usr/bin/env", "clang", "-O0", "-g", "-fprofile-instr-generate",
                     "-fcoverage-mapping", "-o", dir + "/clang_c", SOURCE_coverage_c},
                    dir)
                .exit_code,
            0);
  std::string profile = dir + "/p.hotline";
  RunResult r = Hotline({"record", "-q", "-o", profile, "--", dir + "/clang_c"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  format::RawProfile p = Load(profile);
  std::map<std::string, uint64_t> functions;
  for (const auto& f : p.function_counts) functions[f.name] = f.executions;
  EXPECT_EQ(functions["square"], 100u);
  EXPECT_EQ(functions["fib"], 21891u);
  EXPECT_EQ(functions["never_called"], 0u);
  // The program's own default.profraw was not written: hotline sent it elsewhere.
  struct stat st {};
  EXPECT_NE(stat((dir + "/default.profraw").c_str(), &st), 0);
}

// The annotated listing of a counts-only run, against tests/golden/annotate_coverage_c.txt:
// counts are exact, so after the paths are normalised the listing is the same on every run.
// Costs depend on the compiler's code and are replaced by <cost>. HOTLINE_UPDATE_GOLDEN=1
// rewrites the file.
TEST(Coverage, AnnotatedListingMatchesGolden) {
  std::string dir = Build(SOURCE_coverage_c, "gcc", "golden");
  std::string profile = dir + "/p.hotline";
  ASSERT_EQ(Hotline({"record", "-q", "--counts-only", "-o", profile, "--", dir + "/golden"}, dir)
                .exit_code,
            0);
  RunResult listing = Hotline({"annotate", "--no-color", profile, "coverage_c.c"}, dir);
  ASSERT_EQ(listing.exit_code, 0) << listing.err;
  EXPECT_EQ(listing.out.find('\t'), std::string::npos) << "a TAB in the listing for people";
  std::string text = listing.out;
  // Paths: only the file name stays.
  for (size_t at; (at = text.find(SOURCE_coverage_c)) != std::string::npos;)
    text.replace(at, std::strlen(SOURCE_coverage_c), "coverage_c.c");
  // Costs and their shares, which depend on the compiler's code: every number that is not a
  // count or a line number.
  std::string normal;
  std::istringstream in(text);
  bool in_index = true;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) in_index = false;
    std::istringstream fields(line);
    double number;
    if (in_index && fields >> number) {
      // An index row: the name stays.
      std::string name = line.substr(line.find_last_of("0123456789") + 1);
      line = "<costs>" + name;
    } else if (line.find(" -- ") != std::string::npos || line.starts_with("Index")) {
      line = line.substr(0, line.find_first_of("0123456789")) + "<costs>";
    } else if (line.size() >= 42 &&
               line.substr(0, 6).find_first_not_of(" 0123456789") == std::string::npos) {
      // A listing row: line (6), count (12), cost (12) and % (6), two spaces apart.
      bool costed = line.substr(22, 20).find_first_not_of(' ') != std::string::npos;
      line.replace(22, 20, costed ? "<cost>              " : std::string(20, ' '));
    }
    normal += line + "\n";
  }
  std::string golden_path = std::string(HOTLINE_GOLDEN_DIR) + "/annotate_coverage_c.txt";
  if (const char* update = getenv("HOTLINE_UPDATE_GOLDEN"); update && *update == '1')
    std::ofstream(golden_path) << normal;
  std::ifstream golden(golden_path);
  std::string expected((std::istreambuf_iterator<char>(golden)), {});
  EXPECT_EQ(normal, expected);
}

TEST(Coverage, WithoutCountsTheListingSaysSo) {
  std::string dir = ScratchDir("nocounts");
  std::string profile = dir + "/p.hotline";
  ASSERT_EQ(Hotline({"record", "-q", "-o", profile, "--", PROGRAM_cpu_burn}, dir).exit_code, 3);
  RunResult listing = Hotline({"annotate", profile}, dir);
  EXPECT_EQ(listing.exit_code, 0);
  EXPECT_NE(listing.out.find("no exact counts in this profile"), std::string::npos);
}

TEST(Coverage, MissingSourceIsNotedAndFoundThroughSourceDir) {
  // Build from a copy of the source, then take the copy away.
  std::string dir = ScratchDir("moved");
  std::string copy = dir + "/moved_c.c";
  ASSERT_EQ(Execute({"/bin/cp", SOURCE_coverage_c, copy}, dir).exit_code, 0);
  ASSERT_EQ(
      Execute({"/usr/bin/env", "gcc", "-O0", "-g", "--coverage", "-o", dir + "/moved", copy}, dir)
          .exit_code,
      0);
  std::string profile = dir + "/p.hotline";
  ASSERT_EQ(
      Hotline({"record", "-q", "-F", "0", "-o", profile, "--", dir + "/moved"}, dir).exit_code, 0);
  ASSERT_EQ(unlink(copy.c_str()), 0);
  RunResult missing = Hotline({"annotate", profile, "moved_c.c"}, dir);
  EXPECT_EQ(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("cannot find the source " + copy), std::string::npos) << missing.err;
  EXPECT_NE(missing.out.find("Never executed"), std::string::npos);
  // A directory holding a file of that name makes it found again.
  std::string elsewhere = ScratchDir("elsewhere");
  ASSERT_EQ(Execute({"/bin/cp", SOURCE_coverage_c, elsewhere + "/moved_c.c"}, dir).exit_code, 0);
  RunResult found = Hotline({"annotate", "--source-dir", elsewhere, profile, "moved_c.c"}, dir);
  EXPECT_EQ(found.err.find("cannot find"), std::string::npos) << found.err;
  EXPECT_NE(found.out.find("static long fib(int n) {"), std::string::npos) << found.out;
}

}  // namespace
}  // namespace hotline

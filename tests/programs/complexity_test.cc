// Complexity (docs/complexity.md) on a real program: functions of known complexity, measured per
// call (hotline_size) and per run (hotline sweep). Timing never decides a test: the models are
// checked on the exact line counts of a --coverage build (lines/run), which no busy machine
// blurs; the timed points are checked for what they are (sizes, counts, one per call or run).
// FitComplexity's judgement of noisy times has unit tests of its own.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace hotline {
namespace {

using testing::Hotline;
using testing::ProfilesIn;
using testing::RunResult;
using testing::ScratchDir;

struct Row {
  std::string verdict, model, runner_up, measured, why;
  uint64_t n_from = 0, n_to = 0, sizes = 0, points = 0;
};

// `hotline report -X -m FILE...`: (function, measured) → row.
std::map<std::pair<std::string, std::string>, Row> Complexity(const std::vector<std::string>& files,
                                                              const std::string& dir) {
  std::vector<std::string> args = {"report", "-X", "-m"};
  args.insert(args.end(), files.begin(), files.end());
  RunResult r = Hotline(args, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::pair<std::string, std::string>, Row> rows;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, '\t');) cells.push_back(cell);
    EXPECT_EQ(cells.size(), 14u) << line;
    if (cells.size() != 14) continue;
    Row row{cells[0], cells[1], cells[6], cells[11], cells[12]};
    row.n_from = std::stoull(cells[7]);
    row.n_to = std::stoull(cells[8]);
    row.sizes = std::stoull(cells[9]);
    row.points = std::stoull(cells[10]);
    rows[{cells[13], cells[11]}] = row;
  }
  return rows;
}

void ExpectModel(const std::map<std::pair<std::string, std::string>, Row>& rows,
                 const std::string& function, const std::string& measured,
                 const std::string& model) {
  auto it = rows.find({function, measured});
  ASSERT_NE(it, rows.end()) << function << " " << measured;
  EXPECT_EQ(it->second.verdict, "decided")
      << function << ": " << it->second.model << " (" << it->second.why << ")";
  EXPECT_EQ(it->second.model, model) << function << " (runner-up " << it->second.runner_up << ")";
}

TEST(Complexity, EachCallTaggedWithItsSize) {
  std::string dir = ScratchDir("complexity-api");
  RunResult rec = Hotline(
      {"record", "-q", "--trace=timed", "-o", "api.hotline", "--", PROGRAM_complexity_prog, "api"},
      dir);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  auto rows = Complexity({"api.hotline"}, dir);
  // Every tagged function has its row, with the sizes the program chose and nine calls each.
  struct Expected {
    const char* function;
    uint64_t from, to, sizes;
  };
  for (const Expected& e :
       {Expected{"linear_scan", 1024, 65536, 7}, Expected{"binary_search", 16, 16384, 11},
        Expected{"merge_sort", 64, 4096, 7}, Expected{"insertion_sort", 64, 2048, 6},
        Expected{"triple_loop", 6, 68, 8}, Expected{"subset_sums", 6, 16, 6},
        Expected{"hash_lookups", 1024, 262144, 9}}) {
    auto it = rows.find({e.function, "time/call"});
    ASSERT_NE(it, rows.end()) << e.function;
    EXPECT_EQ(it->second.n_from, e.from) << e.function;
    EXPECT_EQ(it->second.n_to, e.to) << e.function;
    EXPECT_EQ(it->second.sizes, e.sizes) << e.function;
    EXPECT_EQ(it->second.points, 9 * e.sizes) << e.function;
    EXPECT_TRUE(it->second.verdict == "decided" || it->second.verdict == "undecided")
        << e.function << ": " << it->second.verdict;
  }
  auto noisy = rows.find({"noisy_scan", "time/call"});
  ASSERT_NE(noisy, rows.end());
  EXPECT_EQ(noisy->second.sizes, 7u);
  EXPECT_EQ(noisy->second.points, 7u);
  // No run sizes: no per-run rows.
  for (const auto& [key, row] : rows) EXPECT_EQ(key.second, "time/call") << key.first;
}

TEST(Complexity, SweepOneRunPerSize) {
  std::string dir = ScratchDir("complexity-sweep");
  RunResult poly =
      Hotline({"sweep", "--sizes", "16,32,64,128,256,512,1024", "--repeat", "2", "--trace=timed",
               "-o", "poly", "--", PROGRAM_complexity_prog_cov, "poly", "{n}"},
              dir);
  ASSERT_EQ(poly.exit_code, 0) << poly.err;
  EXPECT_EQ(ProfilesIn(dir + "/poly").size(), 14u);
  // A line of progress a run.
  EXPECT_NE(poly.err.find("hotline: sweep: run 1/14: n=16 (round 1)\n"), std::string::npos)
      << poly.err;
  EXPECT_NE(poly.err.find("hotline: sweep: run 14/14: n=1024 (round 2)\n"), std::string::npos)
      << poly.err;
  RunResult exp = Hotline({"sweep", "--sizes", "4,6,8,10,12,14", "--trace=timed", "-o", "subsets",
                           "--", PROGRAM_complexity_prog_cov, "subsets", "{n}"},
                          dir);
  ASSERT_EQ(exp.exit_code, 0) << exp.err;
  // -p 0: every function whose lines change with n, however few.
  auto rows = Complexity({"-p", "0", "poly"}, dir);
  // The lines each function runs, exactly: the models as the functions are written. A helper's
  // lines are its own (lower_bound's searches, merge_runs' moves), as gcov counts them.
  ExpectModel(rows, "linear_scan", "lines/run", "O(n)");
  ExpectModel(rows, "lower_bound", "lines/run", "O(log n)");
  // merge_sort's own loop calls merge_runs about n times; merge_runs moves n log n elements
  // over those n calls, each with a cost of its own: n log n and n are both in it.
  ExpectModel(rows, "merge_sort", "lines/run", "O(n)");
  auto merges = rows.find({"merge_runs", "lines/run"});
  ASSERT_NE(merges, rows.end());
  EXPECT_NE(merges->second.model.find("O(n log n)"), std::string::npos) << merges->second.model;
  ExpectModel(rows, "insertion_sort", "lines/run", "O(n^2)");
  ExpectModel(rows, "triple_loop", "lines/run", "O(n^3)");
  // binary_search's own lines (1024 calls of lower_bound) do not change with n: no row.
  EXPECT_EQ(rows.count({"binary_search", "lines/run"}), 0u);
  // The timed series: one point per run, over the sizes swept (a helper built without
  // instrumentation is not traced, so it has no time of its own).
  auto scan = rows.find({"linear_scan", "time/run"});
  ASSERT_NE(scan, rows.end());
  EXPECT_EQ(scan->second.n_from, 16u);
  EXPECT_EQ(scan->second.n_to, 1024u);
  EXPECT_EQ(scan->second.sizes, 7u);
  EXPECT_EQ(scan->second.points, 14u);
  EXPECT_EQ(rows.count({"lower_bound", "time/run"}), 0u);
  // Each function runs once per run: calls do not change with n and get no row.
  EXPECT_EQ(rows.count({"linear_scan", "calls/run"}), 0u);
  auto subsets = Complexity({"subsets"}, dir);
  ExpectModel(subsets, "subset_sums", "lines/run", "O(2^n)");
}

TEST(Complexity, SweepReplacesNAndSetsHotlineSize) {
  std::string dir = ScratchDir("complexity-env");
  RunResult r = Hotline({"sweep", "--sizes", "3,5", "-o", "env", "--", "/bin/sh", "-c",
                         "echo \"arg={n} env=$HOTLINE_SIZE\""},
                        dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "arg=3 env=3\narg=5 env=5\n");
  RunResult dump = Hotline({"dump", "env/n5.r1.hotline"}, dir);
  EXPECT_NE(dump.out.find("SIZE t="), std::string::npos);
  EXPECT_NE(dump.out.find("function=0 entry_tick=0 n=5"), std::string::npos) << dump.out;
}

TEST(Complexity, BadInputGetsOneLine) {
  std::string dir = ScratchDir("complexity-errors");
  RunResult no_sizes = Hotline({"sweep", "--", "/bin/true"}, dir);
  EXPECT_EQ(no_sizes.exit_code, 2);
  EXPECT_NE(no_sizes.err.find("--sizes"), std::string::npos) << no_sizes.err;
  RunResult no_program = Hotline({"sweep", "--sizes", "1,2"}, dir);
  EXPECT_EQ(no_program.exit_code, 2);
  EXPECT_NE(no_program.err.find("no program"), std::string::npos) << no_program.err;
  RunResult bad_size = Hotline({"sweep", "--sizes", "1,x", "--", "/bin/true"}, dir);
  EXPECT_EQ(bad_size.exit_code, 2);
  // A program that does not exist: one line, the shell's 127, no directory left behind.
  RunResult absent =
      Hotline({"sweep", "--sizes", "1,2", "-o", "absent", "--", "./no-such-program"}, dir);
  EXPECT_EQ(absent.exit_code, 127);
  EXPECT_EQ(absent.err, "hotline: sweep: ./no-such-program: no such program\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/absent"));
  // A profile without sizes.
  RunResult rec = Hotline({"record", "-q", "-o", "plain.hotline", "--", "/bin/true"}, dir);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  RunResult x = Hotline({"report", "-X", "plain.hotline"}, dir);
  EXPECT_EQ(x.exit_code, 1);
  EXPECT_NE(x.err.find("holds no sizes"), std::string::npos) << x.err;
  RunResult mixed = Hotline({"report", "-X", "-G", "plain.hotline"}, dir);
  EXPECT_EQ(mixed.exit_code, 2);
  RunResult missing = Hotline({"complexity", "missing.hotline"}, dir);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("missing.hotline"), std::string::npos) << missing.err;
  // A failing run stops the sweep with the program's status.
  RunResult failing = Hotline({"sweep", "--sizes", "1,2", "-o", "f", "--", "/bin/false"}, dir);
  EXPECT_EQ(failing.exit_code, 1);
  EXPECT_NE(failing.err.find("n=1"), std::string::npos) << failing.err;
}

}  // namespace
}  // namespace hotline

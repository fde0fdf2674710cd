// Complexity (docs/complexity.md) on a real program: functions of known complexity, measured per
// call (hotline_size) and per run (hotline sweep), are classified as they are written; a function
// whose random spin dwarfs its work is "undecided". Times are exact traced times, fitted over
// sizes chosen so that each function's work dwarfs the tracer's and the machine's noise.
#include <gtest/gtest.h>

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
  uint64_t n_from = 0, n_to = 0, sizes = 0;
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
  ExpectModel(rows, "linear_scan", "time/call", "O(n)");
  ExpectModel(rows, "binary_search", "time/call", "O(log n)");
  ExpectModel(rows, "merge_sort", "time/call", "O(n log n)");
  ExpectModel(rows, "insertion_sort", "time/call", "O(n^2)");
  ExpectModel(rows, "triple_loop", "time/call", "O(n^3)");
  ExpectModel(rows, "subset_sums", "time/call", "O(2^n)");
  ExpectModel(rows, "hash_lookups", "time/call", "O(1)");
  auto noisy = rows.find({"noisy_scan", "time/call"});
  ASSERT_NE(noisy, rows.end());
  EXPECT_EQ(noisy->second.verdict, "undecided") << noisy->second.model;
  EXPECT_FALSE(noisy->second.why.empty());
  // The sizes each function was called with, as the program chose them.
  EXPECT_EQ((rows[{"linear_scan", "time/call"}].n_from), 1024u);
  EXPECT_EQ((rows[{"linear_scan", "time/call"}].n_to), 65536u);
  EXPECT_EQ((rows[{"linear_scan", "time/call"}].sizes), 7u);
  EXPECT_EQ((rows[{"subset_sums", "time/call"}].sizes), 6u);
  EXPECT_EQ((rows[{"subset_sums", "time/call"}].n_to), 16u);
  // No run sizes: no per-run rows.
  for (const auto& [key, row] : rows) EXPECT_EQ(key.second, "time/call") << key.first;
}

TEST(Complexity, SweepOneRunPerSize) {
  std::string dir = ScratchDir("complexity-sweep");
  RunResult poly =
      Hotline({"sweep", "--sizes", "16,32,64,128,256,512,1024", "--repeat", "7", "--trace=timed",
               "-o", "poly", "--", PROGRAM_complexity_prog, "poly", "{n}"},
              dir);
  ASSERT_EQ(poly.exit_code, 0) << poly.err;
  EXPECT_EQ(ProfilesIn(dir + "/poly").size(), 49u);
  // Medians of 5 runs per size, up to 2^18 subsets: enough work that a busy machine's noise
  // does not blur 2^n into n^3.
  RunResult exp = Hotline({"sweep", "--sizes", "8,10,12,14,16,18", "--repeat", "5", "--trace=timed",
                           "-o", "subsets", "--", PROGRAM_complexity_prog, "subsets", "{n}"},
                          dir);
  ASSERT_EQ(exp.exit_code, 0) << exp.err;
  auto rows = Complexity({"poly"}, dir);
  ExpectModel(rows, "linear_scan", "time/run", "O(n)");
  ExpectModel(rows, "binary_search", "time/run", "O(log n)");
  ExpectModel(rows, "merge_sort", "time/run", "O(n log n)");
  ExpectModel(rows, "insertion_sort", "time/run", "O(n^2)");
  ExpectModel(rows, "triple_loop", "time/run", "O(n^3)");
  ExpectModel(rows, "hash_lookups", "time/run", "O(1)");
  EXPECT_EQ((rows[{"linear_scan", "time/run"}].n_from), 16u);
  EXPECT_EQ((rows[{"linear_scan", "time/run"}].n_to), 1024u);
  // Each function runs once per run: calls do not change with n and get no row.
  EXPECT_EQ(rows.count({"linear_scan", "calls/run"}), 0u);
  auto subsets = Complexity({"subsets"}, dir);
  ExpectModel(subsets, "subset_sums", "time/run", "O(2^n)");
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

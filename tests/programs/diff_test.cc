// hotline diff on a real program with a slowdown put in on purpose (regression.c): slow_path twice
// as slow in build b (regression_c: a change no busy machine hides), 30 other functions with
// run-to-run noise. Seven runs a side, interleaved as a benchmark should be, with no other test
// beside them (ctest RUN_SERIAL): slow_path is called slower and nothing else is; seven runs of one
// build against seven more of it give no verdict; a run against itself is no change.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace hotline {
namespace {

using testing::Hotline;
using testing::RunResult;
using testing::ScratchDir;

// `diff -m`'s self table: name → verdict.
std::map<std::string, std::string> SelfVerdicts(const std::vector<std::string>& base,
                                                const std::vector<std::string>& next,
                                                const std::string& dir) {
  std::vector<std::string> argv = {"diff", "-m", "-t", "1000"};
  argv.insert(argv.end(), base.begin(), base.end());
  argv.push_back("--");
  argv.insert(argv.end(), next.begin(), next.end());
  RunResult r = Hotline(argv, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::string> verdicts;
  std::istringstream in(r.out);
  std::string table;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("# ")) {
      table = line.substr(2);
      continue;
    }
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, '\t');) cells.push_back(cell);
    if (table == "self" && cells.size() == 10) verdicts[cells[9]] = cells[8];
  }
  return verdicts;
}

std::vector<std::string> Slower(const std::map<std::string, std::string>& verdicts) {
  std::vector<std::string> names;
  for (const auto& [name, verdict] : verdicts)
    if (verdict == "slower" || verdict == "faster") names.push_back(name + " " + verdict);
  return names;
}

TEST(Diff, FindsTheSlowdownAndNothingElse) {
  std::string dir = ScratchDir("diff_regression");
  std::vector<std::string> a, b, again;
  // Interleaved, so that whatever drifts on the machine meets both builds alike.
  for (int run = 0; run < 7; ++run)
    for (auto [program, runs, name] :
         {std::tuple{PROGRAM_regression_a, &a, "a"}, std::tuple{PROGRAM_regression_c, &b, "b"},
          std::tuple{PROGRAM_regression_a, &again, "again"}}) {
      std::string profile = dir + "/" + name + std::to_string(run) + ".hotline";
      RunResult r =
          Hotline({"record", "-q", "-F", "10000", "-o", profile, "--", program, "4000000"}, dir);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      runs->push_back(profile);
    }
  EXPECT_EQ(Slower(SelfVerdicts(a, b, dir)), std::vector<std::string>{"slow_path slower"});
  EXPECT_EQ(Slower(SelfVerdicts(a, again, dir)), std::vector<std::string>{});
  RunResult same = Hotline({"diff", a[0], a[0]}, dir);
  EXPECT_EQ(same.out, "No change: both sides spent the same time in every function.\n");
}

}  // namespace
}  // namespace hotline

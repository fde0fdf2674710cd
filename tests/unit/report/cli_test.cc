// `hotline report` as a user runs it: flags in any order, long spellings, the default file, and
// bad input (missing, not a profile, damaged, truncated, rebuilt binary), each a clear message.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "golden_profile.h"
#include "test_util.h"

namespace hotline {
namespace {

using testing::RunResult;
using testing::RunShell;

class ReportCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::ScratchDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    profile_ = dir_ + "/golden.hotline";
    std::string error;
    ASSERT_TRUE(testing::WriteGoldenProfile(profile_, &error)) << error;
  }
  RunResult report(const std::string& args, const std::string& file) {
    return RunShell(std::string(HOTLINE_BIN) + " report " + args + " '" + file + "'");
  }
  static size_t lines(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }

  std::string dir_, profile_;
};

TEST_F(ReportCliTest, TablesPrintInOneOrderWhateverTheFlagOrder) {
  RunResult a = report("-G -T -F", profile_);
  RunResult b = report("-F -T -G", profile_);
  RunResult c = report("-TGF", profile_);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.out, c.out);
  size_t top = a.out.find("Top 10 lines"), graph = a.out.find("Call graph"),
         files = a.out.find("Files"), summary = a.out.find("Summary");
  ASSERT_NE(top, std::string::npos);
  EXPECT_LT(top, graph);
  EXPECT_LT(graph, files);
  EXPECT_LT(files, summary);
}

TEST_F(ReportCliTest, LongSpellingsAndAllMeanTheSame) {
  RunResult shortform = report("-T -G -F -C -L -M -i -t3 -p5", profile_);
  RunResult longform = report(
      "--top --graph --files --flat --lines --functions --definitions --top-count 3 --cutoff 5",
      profile_);
  ASSERT_EQ(shortform.exit_code, 0) << shortform.err;
  EXPECT_EQ(shortform.out, longform.out);
  EXPECT_EQ(report("-A", profile_).out, report("-T -G -F -C", profile_).out);
  EXPECT_EQ(report("--all -N", profile_).out, report("-T -G -F -C --no-summary", profile_).out);
  EXPECT_EQ(report("-R -s", profile_).out, report("--raw --stack-changes", profile_).out);
}

TEST_F(ReportCliTest, MachineModeHasNoTitlesHeadersOrSummary) {
  RunResult r = report("-A -m", profile_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("Summary"), std::string::npos);
  EXPECT_EQ(r.out.find("percent"), std::string::npos);
  EXPECT_EQ(r.out.find("\n\n"), std::string::npos);
  // -M -m: file, line, calls, self_ns, cumulative_ns, name.
  RunResult m = report("-M -m", profile_);
  bool saw_leaf = false;
  std::istringstream rows(m.out);
  for (std::string row; std::getline(rows, row);) {
    EXPECT_EQ(std::count(row.begin(), row.end(), '\t'), 5) << row;
    if (row.ends_with("\tgolden_leaf")) {
      saw_leaf = true;
      // golden_leaf, 1 ms a period: thread 100 has 5 + 3 samples and one of weight 2, thread
      // 101 has 3 + 2: 15 ms of self time, which is all of its inclusive time.
      EXPECT_NE(row.find("\t15000000\t15000000\t"), std::string::npos) << row;
    }
  }
  EXPECT_TRUE(saw_leaf) << m.out;
}

TEST_F(ReportCliTest, ThreadsPrintEachThreadAndPrefixMachineRows) {
  RunResult r = report("--threads -C", profile_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("=== thread 100 (main)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("=== thread 101 (worker)"), std::string::npos) << r.out;
  RunResult m = report("--threads -C -m", profile_);
  std::istringstream rows(m.out);
  size_t n = 0;
  for (std::string row; std::getline(rows, row); ++n)
    EXPECT_TRUE(row.starts_with("100\t") || row.starts_with("101\t")) << row;
  EXPECT_GT(n, 4u);
}

TEST_F(ReportCliTest, DefaultFileIsTheNewestProfileHere) {
  std::filesystem::copy_file(profile_, dir_ + "/older.hotline");
  std::filesystem::last_write_time(
      dir_ + "/older.hotline",
      std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
  testing::WriteFile(dir_ + "/newest.hotline", testing::ReadFile(profile_));
  RunResult implicit = RunShell(std::string(HOTLINE_BIN) + " report -C -m", dir_);
  ASSERT_EQ(implicit.exit_code, 0) << implicit.err;
  EXPECT_EQ(implicit.out, report("-C -m", profile_).out);
  // The newest one is a different profile: make it so, and see that it is the one read.
  testing::WriteFile(dir_ + "/newest.hotline", "not a profile");
  RunResult newest = RunShell(std::string(HOTLINE_BIN) + " report", dir_);
  EXPECT_NE(newest.exit_code, 0);
  EXPECT_NE(newest.err.find("newest.hotline"), std::string::npos) << newest.err;
}

TEST_F(ReportCliTest, NoProfileHereIsAClearError) {
  std::string empty = testing::ScratchDir("empty");
  RunResult r = RunShell(std::string(HOTLINE_BIN) + " report", empty);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_TRUE(r.err.starts_with("hotline: ")) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST_F(ReportCliTest, MissingFileIsAClearError) {
  RunResult r = report("-A", dir_ + "/nope.hotline");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("nope.hotline"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST_F(ReportCliTest, NotAProfileIsAClearError) {
  testing::WriteFile(dir_ + "/text.hotline", "hello, I am a text file\n");
  RunResult r = report("-A", dir_ + "/text.hotline");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("not a hotline profile"), std::string::npos) << r.err;
}

TEST_F(ReportCliTest, DamagedProfileReportsWhatCouldBeReadAndHowMuchWasSkipped) {
  std::string data = testing::ReadFile(profile_);
  std::string intact = report("-C -m", profile_).out;
  // Flip bytes in the middle of the file: inside the second of three chunks.
  for (size_t i = data.size() / 2; i < data.size() / 2 + 8; ++i)
    data[i] = static_cast<char>(~data[i]);
  testing::WriteFile(dir_ + "/damaged.hotline", data);
  RunResult r = report("-C", dir_ + "/damaged.hotline");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("hotline: warning: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("damaged"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("skipped"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("Summary"), std::string::npos) << r.out;
  EXPECT_NE(report("-C -m", dir_ + "/damaged.hotline").out, intact);
}

TEST_F(ReportCliTest, TruncatedProfileReportsTheDroppedTail) {
  std::string data = testing::ReadFile(profile_);
  testing::WriteFile(dir_ + "/cut.hotline", data.substr(0, data.size() - 20));
  RunResult r = report("-C", dir_ + "/cut.hotline");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("golden_leaf"), std::string::npos) << r.out;
}

TEST_F(ReportCliTest, RebuiltBinaryIsWarnedAbout) {
  std::string error;
  ASSERT_TRUE(
      testing::WriteGoldenProfile(dir_ + "/rebuilt.hotline", &error, std::string(20, '\x5a')))
      << error;
  RunResult r = report("-C", dir_ + "/rebuilt.hotline");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("hotline: warning: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("build-id"), std::string::npos) << r.err;
}

TEST_F(ReportCliTest, HelpNamesEveryFlag) {
  RunResult r = RunShell(std::string(HOTLINE_BIN) + " report --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* flag : {"--top", "--top-count", "--graph", "--files", "--lines", "--flat",
                           "--functions", "--raw", "--stack-changes", "--definitions", "--cutoff",
                           "--machine", "--no-summary", "--all", "--threads"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
}

TEST_F(ReportCliTest, BadFlagIsAClearError) {
  RunResult r = report("-p 150", profile_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(r.err.starts_with("hotline: ")) << r.err;
}

}  // namespace
}  // namespace hotline

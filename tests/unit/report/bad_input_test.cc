// Bad input to the analyser (issue 26, items 13 and 14), as a user meets it: a profile with a
// value no run can have is read as damaged, never a crash; and a deep recursion costs `report`
// and `html` memory in its depth, not its square. Memory is the child's own peak (wait4's
// rusage), so no timing decides these tests.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "sample_profile.h"
#include "test_util.h"

namespace hotline {
namespace {

using testing::RunResult;
using testing::RunShell;

class BadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::ScratchDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  std::string dir_;
};

// Exits 0 with the damage said, or fails with a one-line error: never a signal (134 was
// std::bad_alloc's abort).
void ExpectNoCrash(const RunResult& r, const std::string& file) {
  EXPECT_LT(r.exit_code, 128) << r.err;
  if (r.exit_code == 0) {
    EXPECT_NE(r.err.find("malformed record"), std::string::npos) << r.err;
  } else {
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(file), std::string::npos) << r.err;
  }
}

TEST_F(BadInputTest, AnImpossibleWeightIsDamageInReportAndHtml) {
  std::string file = dir_ + "/c.hotline";
  testing::WriteFile(file, testing::Issue26File());
  RunResult procedures = RunShell(std::string(HOTLINE_BIN) + " report -P '" + file + "'");
  ExpectNoCrash(procedures, file);
  EXPECT_EQ(procedures.exit_code, 0);
  // The sample that could be read: 2 ms in the profiler.
  EXPECT_NE(procedures.out.find("[profiler]"), std::string::npos) << procedures.out;
  RunResult all = RunShell(std::string(HOTLINE_BIN) + " report -A '" + file + "'");
  ExpectNoCrash(all, file);
  RunResult html = RunShell(std::string(HOTLINE_BIN) + " html '" + file + "' -o '" + dir_ + "/d'");
  ExpectNoCrash(html, file);
  EXPECT_EQ(html.exit_code, 0);
}

// Whatever escapes a command (here std::bad_alloc: every malloc above 1 MiB fails, and building
// a recursion of 100,000 levels needs larger arrays) ends it with one line naming the profile
// and exit status 1, never an abort.
TEST_F(BadInputTest, AnAllocationThatFailsIsOneLineNotAnAbort) {
#ifndef HOTLINE_FAIL_BIG_MALLOC
  GTEST_SKIP() << "built with the sanitizers, whose malloc cannot be interposed";
#else
  std::string file = dir_ + "/deep.hotline";
  ASSERT_TRUE(testing::WriteDeepRecursionProfile(file, 100'000));
  std::string preload = std::string("LD_PRELOAD='") + HOTLINE_FAIL_BIG_MALLOC + "' ";
  for (std::string command : {std::string("report -A"), "html -o '" + dir_ + "/html'"}) {
    RunResult r = RunShell(preload + HOTLINE_BIN + " " + command + " '" + file + "'");
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.err;
    std::string first_word = command.substr(0, command.find(' '));
    EXPECT_NE(r.err.find("hotline: " + first_word + ": " + file + ": out of memory"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
#endif
}

// The peak resident memory of `hotline ARGS...`, in KiB, and its exit status.
struct Peak {
  long kib = 0;
  int status = -1;
};

Peak PeakOf(std::vector<std::string> args) {
  args.insert(args.begin(), HOTLINE_BIN);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    // Quiet: the tables of 5000 levels are not what the test reads.
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  Peak peak;
  struct rusage usage {};
  int status = 0;
  if (pid > 0 && wait4(pid, &status, 0, &usage) == pid) {
    peak.kib = usage.ru_maxrss;
    peak.status = status;
  }
  return peak;
}

// Issue 26's perl recursion, 5000 levels deep, sampled at every level: 12.5 million frames on
// the stacks together. Before, `report` took 506 MB for it (36 MB at 1000 levels, 7 GB at
// 20,000); linear, the 4500 levels more than the shallow profile's cost a few megabytes. The
// bound, 4 KiB a level, is ten times what they take and a tenth of what a square would.
TEST_F(BadInputTest, ADeepRecursionCostsMemoryInItsDepth) {
  std::string shallow = dir_ + "/shallow.hotline", deep = dir_ + "/deep.hotline";
  ASSERT_TRUE(testing::WriteDeepRecursionProfile(shallow, 500));
  ASSERT_TRUE(testing::WriteDeepRecursionProfile(deep, 5000));
  constexpr long kKibPerLevel = 4;
  for (std::vector<std::string> command :
       {std::vector<std::string>{"report", "-A"}, std::vector<std::string>{"report", "-P", "-G"},
        std::vector<std::string>{"html", "-o", dir_ + "/html"}}) {
    std::vector<std::string> on_shallow = command, on_deep = command;
    on_shallow.push_back(shallow);
    on_deep.push_back(deep);
    Peak small = PeakOf(on_shallow), large = PeakOf(on_deep);
    ASSERT_TRUE(WIFEXITED(small.status) && WEXITSTATUS(small.status) == 0) << command[0];
    ASSERT_TRUE(WIFEXITED(large.status) && WEXITSTATUS(large.status) == 0) << command[0];
    EXPECT_LT(large.kib - small.kib, (5000 - 500) * kKibPerLevel)
        << command[0] << " " << command[1] << ": " << small.kib << " KiB at 500 levels, "
        << large.kib << " KiB at 5000";
  }
}

}  // namespace
}  // namespace hotline

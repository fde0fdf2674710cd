// The program never notices (DESIGN.md rule 1), seen from inside the program: what self_view
// prints of its signals, descriptors, environment, threads and mappings, plain and profiled.
// By default nothing of hotline enters the program, so every section is the plain run's; where
// the runtime is needed (the heap, the in-process sampler) the program's own view of its
// signals and mask still is.
#include <gtest/gtest.h>
#include <signal.h>

#include <cctype>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace hotline {
namespace {

using testing::Execute;
using testing::RecordAndCompare;
using testing::Recorded;
using testing::RunResult;
using testing::ScratchDir;

// self_view's output by section ("== name" lines begin one).
std::map<std::string, std::string> Sections(const std::string& text) {
  std::map<std::string, std::string> sections;
  std::istringstream lines(text);
  std::string line, name;
  while (std::getline(lines, line)) {
    if (line.rfind("== ", 0) == 0) {
      name = line.substr(3);
      sections[name];
      continue;
    }
    sections[name] += line + "\n";
  }
  return sections;
}

// A line of /proc/self/status's, e.g. "SigCgt:\t0000000000000002".
std::string StatusLine(const std::string& section, const std::string& key) {
  std::istringstream lines(section);
  std::string line;
  while (std::getline(lines, line))
    if (line.rfind(key + ":", 0) == 0) return line;
  return "";
}

// Runs self_view ARGS plain and profiled with `options`, without comparing the outputs
// (RecordAndCompare would: each test says which sections must agree).
struct Views {
  std::map<std::string, std::string> plain, profiled;
  RunResult plain_run, profiled_run;
};

// `launcher` comes before both commands (the plain one and hotline's).
Views RunViews(const std::string& name, const std::vector<std::string>& args,
               const std::vector<std::string>& options,
               const std::vector<std::string>& launcher = {}) {
  Views v;
  std::vector<std::string> argv = {PROGRAM_self_view};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> plain = launcher;
  plain.insert(plain.end(), argv.begin(), argv.end());
  v.plain_run = Execute(plain, ScratchDir(name + "-plain"));
  std::string dir = ScratchDir(name);
  std::vector<std::string> command = launcher;
  for (const char* word : {HOTLINE_BIN, "record", "-q", "-o"}) command.push_back(word);
  command.push_back(dir + "/p.hotline");
  command.insert(command.end(), options.begin(), options.end());
  command.push_back("--");
  command.insert(command.end(), argv.begin(), argv.end());
  v.profiled_run = Execute(command, dir);
  EXPECT_EQ(v.profiled_run.exit_code, v.plain_run.exit_code) << v.profiled_run.err;
  v.plain = Sections(v.plain_run.out);
  v.profiled = Sections(v.profiled_run.out);
  return v;
}

// With the kernel sampler and a program that needs nothing inside it, nothing enters it: no
// preloaded library, no environment variable, no descriptor, no thread, no signal handler.
TEST(NeverNotices, DefaultRecordingLeavesTheProgramsOwnViewUntouched) {
  for (const std::vector<std::string>& options :
       {std::vector<std::string>{}, {"--clock", "wall"}, {"--follow-exec"}}) {
    std::string label = options.empty() ? "default" : options[0];
    Views v = RunViews("view-default", {"view"}, options);
    ASSERT_FALSE(v.plain.empty());
    for (const auto& [section, text] : v.plain)
      EXPECT_EQ(v.profiled[section], text) << label << ": section " << section;
  }
}

// The runtime's modes: the program's own view of its signals (dispositions and mask, as it
// asks for them) is the plain run's, and so is the kernel's mask and set of ignored signals.
class RuntimeModes : public ::testing::TestWithParam<std::vector<std::string>> {};

TEST_P(RuntimeModes, SignalsAsTheProgramSetThem) {
  Views v = RunViews("view-runtime", {"view"}, GetParam());
  for (const char* section : {"dispositions", "mask"})
    EXPECT_EQ(v.profiled[section], v.plain[section]) << section;
  for (const char* key : {"SigBlk", "SigIgn"})
    EXPECT_EQ(StatusLine(v.profiled["kernel-signals"], key),
              StatusLine(v.plain["kernel-signals"], key));
}

// A handler installed without SA_RESTART: the read a signal interrupts fails with EINTR, as
// without hotline (the runtime's own handler kept SA_RESTART and the read restarted).
TEST_P(RuntimeModes, InterruptedCallsAreNotRestarted) {
  Views v = RunViews("eintr", {"eintr"}, GetParam());
  EXPECT_EQ(v.plain_run.out, "read=-1 Interrupted system call\n");
  EXPECT_EQ(v.profiled_run.out, v.plain_run.out);
}

// Ignored signals and the mask survive exec: nohup and shells' background jobs rely on it. The
// program executed runs without the runtime, so the kernel's view of it is the plain run's.
TEST_P(RuntimeModes, IgnoredSignalsAndTheMaskSurviveExec) {
  Views v = RunViews("ignore-exec", {"ignore-exec", "TERM", "INT", "QUIT", "HUP", "IO"},
                     GetParam());
  ASSERT_NE(StatusLine(v.plain["kernel-signals"], "SigIgn"), "");
  for (const char* section : {"dispositions", "mask", "kernel-signals"})
    EXPECT_EQ(v.profiled[section], v.plain[section]) << section;
}

// A program started with the C library's own signals ignored (from a shell that a threaded
// program's posix_spawn started, as CI's are) keeps them so, though the runtime's writer
// thread makes glibc want a handler on 33; and setuid, which then signals that thread, returns.
TEST_P(RuntimeModes, TheCLibrarysOwnSignalsStayAsInherited) {
  const std::vector<std::string> launcher = {PROGRAM_self_view, "libc-ignored"};
  Views v = RunViews("libc-signals", {"view"}, GetParam(), launcher);
  EXPECT_EQ(StatusLine(v.plain["kernel-signals"], "SigIgn").substr(8, 8), "00000001")
      << "the launcher did not ignore signal 33";
  for (const char* key : {"SigBlk", "SigIgn"})
    EXPECT_EQ(StatusLine(v.profiled["kernel-signals"], key),
              StatusLine(v.plain["kernel-signals"], key));
  Views after = RunViews("libc-setxid", {"setxid"}, GetParam(), launcher);
  EXPECT_EQ(after.plain["setxid"], "setuid=0 setgid=0\n");
  EXPECT_EQ(after.profiled["setxid"], after.plain["setxid"]);
  EXPECT_EQ(StatusLine(after.profiled["kernel-signals"], "SigIgn"),
            StatusLine(after.plain["kernel-signals"], "SigIgn"));
}

INSTANTIATE_TEST_SUITE_P(
    NeverNotices, RuntimeModes,
    ::testing::Values(std::vector<std::string>{}, std::vector<std::string>{"--heap-sample"},
                      std::vector<std::string>{"--sampler", "signal"},
                      std::vector<std::string>{"--sampler", "signal", "--clock", "wall"}),
    [](const ::testing::TestParamInfo<std::vector<std::string>>& info) {
      std::string name;
      for (const std::string& word : info.param)
        for (char c : word)
          if (std::isalnum(static_cast<unsigned char>(c))) name += c;
      return name.empty() ? std::string("default") : name;
    });

// bash writes into its environment strings: anything hotline puts there must be writable (a
// string literal in environ made every bash under --follow-exec die of SIGSEGV).
TEST(NeverNotices, BashRunsUnderFollowExec) {
  for (const std::vector<std::string>& options :
       {std::vector<std::string>{"--follow-exec"},
        std::vector<std::string>{"--follow-exec", "--heap-sample"},
        std::vector<std::string>{"--follow-exec", "--sampler", "signal"}}) {
    Recorded r = RecordAndCompare("bash-follow", {"/bin/bash", "-c", "X=1; export X; echo ran $X"},
                                  options);
    EXPECT_EQ(r.profiled.exit_code, 0) << options.back();
    EXPECT_EQ(r.profiled.out, "ran 1\n") << options.back();
  }
}

}  // namespace
}  // namespace hotline

// Nothing recorded is lost, and every ending is told right: a full disk, two recorders on one
// file, a recorder killed while the program runs on, processes that are not hotline's children,
// and time that a wall clock would count after a process died.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "format/raw_profile.h"
#include "harness.h"

namespace hotline {
namespace {

using testing::Execute;
using testing::Hotline;
using testing::Load;
using testing::ProfilesIn;
using testing::RunResult;
using testing::ScratchDir;

// Starts argv in `dir` without waiting, its output thrown away.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& dir) {
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(127);
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

int WaitFor(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

off_t SizeOf(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? st.st_size : 0;
}

// Waits (up to 20 s) until the file at `path` holds more than `bytes`.
bool WaitForBytes(const std::string& path, off_t bytes) {
  for (int i = 0; i < 400; ++i) {
    if (SizeOf(path) > bytes) return true;
    usleep(50'000);
  }
  return false;
}

// Running, or stopped: not gone, nor a zombie waiting for a parent to reap it.
bool ProcessAlive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t name_end = text.rfind(')');
  return name_end != std::string::npos && name_end + 2 < text.size() && text[name_end + 2] != 'Z';
}

uint64_t Samples(const format::RawProfile& p) {
  uint64_t n = 0;
  for (const auto& s : p.samples) n += s.weight;
  return n;
}

// A profile the file system has no room for: one line naming it and why, the program's own
// output and files untouched, and an exit status that says the profile was lost.
TEST(Endings, FullDiskSaysSoAndExitsWith125) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a small file system needs root";
  std::string dir = ScratchDir("full-disk");
  std::string tiny = dir + "/tiny";
  ASSERT_EQ(mkdir(tiny.c_str(), 0755), 0);
  if (mount("tmpfs", tiny.c_str(), "tmpfs", 0, "size=8k") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << strerror(errno);
  for (const char* sampler : {"kernel", "signal"}) {
    RunResult plain = Execute({PROGRAM_cpu_burn}, dir);
    RunResult r = Execute({HOTLINE_BIN, "record", "-q", "--sampler", sampler, "-F", "20000", "-o",
                           tiny + "/p.hotline", "--", PROGRAM_cpu_burn},
                          dir);
    EXPECT_EQ(r.exit_code, 125) << sampler << ": " << r.err;
    EXPECT_NE(r.err.find("cannot write the profile " + tiny + "/p.hotline"), std::string::npos)
        << r.err;
    EXPECT_EQ(r.out, plain.out) << sampler;
    unlink((tiny + "/p.hotline").c_str());
  }
  umount(tiny.c_str());
}

// One writer per file: a second recording into a profile being written is refused, and the first
// one's profile stays whole.
TEST(Endings, SecondRecorderOfOneProfileIsRefused) {
  std::string dir = ScratchDir("two-writers");
  std::string profile = dir + "/p.hotline";
  pid_t first =
      Spawn({HOTLINE_BIN, "record", "-q", "-o", profile, "--", PROGRAM_attach_target}, dir);
  ASSERT_TRUE(WaitForBytes(profile, 0));
  RunResult second = Hotline({"record", "-o", profile, "--", "/bin/echo", "ran"}, dir);
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_EQ(second.out, "");  // the program did not run
  EXPECT_NE(second.err.find("is being written by another hotline record"), std::string::npos)
      << second.err;
  EXPECT_EQ(WaitFor(first), 5);
  format::RawProfile p = Load(profile);  // undamaged
  ASSERT_TRUE(p.end.has_value());
  EXPECT_GT(Samples(p), 1000u);
}

// The recorder killed while the program runs on: what it had read is in the profile already.
TEST(Endings, KilledRecorderKeepsWhatItHadWritten) {
  std::string dir = ScratchDir("killed-recorder");
  std::string profile = dir + "/p.hotline";
  pid_t recorder =
      Spawn({HOTLINE_BIN, "record", "-q", "-o", profile, "--", PROGRAM_attach_target}, dir);
  // About a second of the program's two threads, then the recorder goes.
  ASSERT_TRUE(WaitForBytes(profile, 2000));
  usleep(1'000'000);
  kill(recorder, SIGKILL);
  EXPECT_EQ(WaitFor(recorder), 128 + SIGKILL);
  format::ReadStats stats;
  Expected<format::RawProfile> p = format::LoadRawProfile(profile, &stats);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_TRUE(p->process.has_value());
  // The program runs on, unharmed, to its end: 4 s of CPU, which a loaded machine stretches.
  for (int i = 0; i < 1200 && ProcessAlive(pid_t(p->process->pid)); ++i) usleep(50'000);
  EXPECT_FALSE(ProcessAlive(pid_t(p->process->pid)));
  EXPECT_GT(Samples(*p), 500u) << "a second of two threads, less the last quarter second";
  RunResult report = Hotline({"report", "-C", profile}, dir);
  EXPECT_EQ(report.exit_code, 0) << report.err;
}

// A process hotline attached to ends while sampled: its END is how it ended, when the kernel
// told (the process-events connector, root), else that it ended; never a made-up SIGKILL.
TEST(Endings, AttachedProcessEndingIsToldAsItWas) {
  std::string dir = ScratchDir("attach-ends");
  pid_t target = Spawn({PROGRAM_attach_target}, dir);
  RunResult r = Hotline({"record", "-p", std::to_string(target), "-o", dir + "/a.hotline"}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("ended meanwhile"), std::string::npos) << r.err;
  EXPECT_EQ(WaitFor(target), 5);
  format::RawProfile p = Load(dir + "/a.hotline");
  ASSERT_TRUE(p.end.has_value());
  if (geteuid() == 0 || p.end->how != format::EndHow::kEnded) {
    EXPECT_EQ(p.end->how, format::EndHow::kExit);
    EXPECT_EQ(p.end->code, 5u);
  }
}

// A program killed by SIGTERM from its parent (timeout) under --follow-exec: its profile says
// SIGTERM (or, without the kernel's word, that it ended), never SIGKILL.
TEST(Endings, ProgramKilledByItsParentIsToldSo) {
  std::string dir = ScratchDir("timeout");
  RunResult r = Hotline({"record", "-q", "--follow-exec", "-o", dir + "/t.hotline", "--",
                         "/usr/bin/timeout", "0.5", PROGRAM_attach_target},
                        dir);
  EXPECT_EQ(r.exit_code, 124) << r.err;
  std::vector<std::string> profiles = ProfilesIn(dir);
  ASSERT_EQ(profiles.size(), 2u);
  format::RawProfile target = Load(profiles[0] == dir + "/t.hotline" ? profiles[1] : profiles[0]);
  ASSERT_TRUE(target.end.has_value());
  if (geteuid() == 0 || target.end->how != format::EndHow::kEnded) {
    EXPECT_EQ(target.end->how, format::EndHow::kSignal);
    EXPECT_EQ(target.end->code, uint64_t(SIGTERM));
  }
}

// Under the wall clock, a process killed by SIGKILL is not charged for the time after its death.
TEST(Endings, WallClockStopsAtDeath) {
  std::string dir = ScratchDir("wall-death");
  timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  RunResult r = Hotline({"record", "-q", "--clock", "wall", "-o", dir + "/w.hotline", "--",
                         "/bin/sh", "-c", "i=0; while [ $i -lt 100 ]; do /bin/true; i=$((i+1)); "
                                          "done; kill -KILL $$"},
                        dir);
  clock_gettime(CLOCK_MONOTONIC, &end);
  EXPECT_EQ(r.exit_code, 128 + SIGKILL) << r.err;
  double elapsed_ns = double(end.tv_sec - start.tv_sec) * 1e9 + double(end.tv_nsec - start.tv_nsec);
  uint64_t recorded_ns = 0;
  for (const std::string& path : ProfilesIn(dir)) {
    format::RawProfile p = Load(path);
    recorded_ns += Samples(p) * p.process->period_ns;
  }
  EXPECT_LT(double(recorded_ns), elapsed_ns * 1.05);
}

}  // namespace
}  // namespace hotline

// End to end for `hotline record` and `hotline dump`: real programs run plain and under hotline,
// with output, exit status and the profile's contents checked against what must be true.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "format/raw_profile.h"

namespace hotline {
namespace {

struct RunResult {
  std::string out, err;
  int exit_code = -1;  // as a shell reports it: 128+N for a death by signal N
};

// Runs argv (no shell) in `dir`, capturing stdout and stderr.
RunResult Execute(const std::vector<std::string>& argv, const std::string& dir) {
  int out_pipe[2], err_pipe[2];
  EXPECT_EQ(pipe(out_pipe), 0);
  EXPECT_EQ(pipe(err_pipe), 0);
  pid_t child = fork();
  if (child == 0) {
    if (chdir(dir.c_str()) != 0) _exit(121);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(122);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  RunResult run;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[4096];
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? run.out : run.err).append(buf, size_t(n));
      }
    }
  }
  int status = 0;
  waitpid(child, &status, 0);
  run.exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  return run;
}

std::string ScratchDir(const std::string& name) {
  const char* tmp = getenv("TMPDIR");
  std::string pattern = std::string(tmp ? tmp : "/tmp") + "/hotline-record-" + name + "-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  EXPECT_NE(mkdtemp(buf.data()), nullptr);
  return buf.data();
}

std::vector<std::string> ProfilesIn(const std::string& dir) {
  std::vector<std::string> found;
  DIR* d = opendir(dir.c_str());
  while (dirent* e = d ? readdir(d) : nullptr) {
    std::string name = e->d_name;
    if (name.size() > 8 && name.substr(name.size() - 8) == ".hotline") found.push_back(dir + "/" + name);
  }
  if (d) closedir(d);
  std::sort(found.begin(), found.end());
  return found;
}

format::RawProfile Load(const std::string& path) {
  format::ReadStats stats;
  Expected<format::RawProfile> profile = format::LoadRawProfile(path, &stats);
  EXPECT_TRUE(profile.ok()) << profile.status().message();
  EXPECT_FALSE(stats.damaged()) << path << ": " << stats.summary();
  return profile.ok() ? std::move(*profile) : format::RawProfile{};
}

// Every thread that used at least 200 ms of CPU got one sample per period, within 20%.
void ExpectSamplesMatchCpuTime(const format::RawProfile& p) {
  ASSERT_TRUE(p.process.has_value());
  auto per_thread = p.samplesPerThread();
  int checked = 0;
  for (const format::RawThread& t : p.threads) {
    if (!t.cpu_ns || *t.cpu_ns < 200'000'000) continue;
    double sampled = double(per_thread[t.tid]) * double(p.process->period_ns);
    EXPECT_NEAR(sampled / double(*t.cpu_ns), 1.0, 0.2)
        << "thread " << t.tid << ": " << per_thread[t.tid] << " samples for " << *t.cpu_ns << " ns";
    ++checked;
  }
  EXPECT_GT(checked, 0) << "no thread with enough CPU time to check";
}

struct Recorded {
  RunResult plain, profiled;
  std::string dir, profile;
};

// Runs `argv` plain, then under `hotline record -q -o DIR/p.hotline [record_options] --`, each in
// a directory of its own, and checks both behaved the same.
Recorded RecordAndCompare(const std::string& name, const std::vector<std::string>& argv,
                          const std::vector<std::string>& record_options = {}) {
  Recorded r;
  r.plain = Execute(argv, ScratchDir(name + "-plain"));
  r.dir = ScratchDir(name);
  r.profile = r.dir + "/p.hotline";
  std::vector<std::string> command = {HOTLINE_BIN, "record", "-q", "-o", r.profile};
  command.insert(command.end(), record_options.begin(), record_options.end());
  command.push_back("--");
  command.insert(command.end(), argv.begin(), argv.end());
  r.profiled = Execute(command, r.dir);
  EXPECT_EQ(r.profiled.out, r.plain.out);
  EXPECT_EQ(r.profiled.err, r.plain.err);
  EXPECT_EQ(r.profiled.exit_code, r.plain.exit_code);
  return r;
}

TEST(Record, CpuBurnerKeepsOutputAndExitStatus) {
  Recorded r = RecordAndCompare("cpu_burn", {PROGRAM_cpu_burn});
  EXPECT_EQ(r.plain.exit_code, 3);
  format::RawProfile p = Load(r.profile);
  ExpectSamplesMatchCpuTime(p);
  ASSERT_TRUE(p.end.has_value());
  EXPECT_EQ(p.end->how, format::EndHow::kExit);
}

TEST(Record, EveryThreadIsSampled) {
  Recorded r = RecordAndCompare("threads", {PROGRAM_threads});
  format::RawProfile p = Load(r.profile);
  int busy = 0;
  bool named = false;
  for (const auto& t : p.threads) {
    if (t.cpu_ns && *t.cpu_ns >= 200'000'000) ++busy;
    if (t.name == "worker-zero") named = true;
  }
  EXPECT_EQ(busy, 4);
  EXPECT_TRUE(named);
  ExpectSamplesMatchCpuTime(p);
}

TEST(Record, ForkedChildWritesItsOwnProfile) {
  Recorded r = RecordAndCompare("forker", {PROGRAM_forker});
  std::vector<std::string> profiles = ProfilesIn(r.dir);
  ASSERT_EQ(profiles.size(), 2u);
  format::RawProfile parent = Load(r.profile);
  std::string child_path = profiles[0] == r.profile ? profiles[1] : profiles[0];
  format::RawProfile child = Load(child_path);
  ASSERT_TRUE(child.process && parent.process);
  EXPECT_EQ(child.process->ppid, parent.process->pid);
  EXPECT_TRUE(child.process->flags & format::kForkedChild);
  EXPECT_NE(child_path.find("p." + std::to_string(child.process->pid) + ".hotline"),
            std::string::npos);
  ExpectSamplesMatchCpuTime(parent);
  ExpectSamplesMatchCpuTime(child);
  ASSERT_TRUE(child.end.has_value());
  EXPECT_EQ(child.end->code, 4u);
}

TEST(Record, DlopenedLibraryIsInTheModuleTable) {
  Recorded r = RecordAndCompare("dlopener", {PROGRAM_dlopener, PLUGIN_PATH});
  format::RawProfile p = Load(r.profile);
  const format::RawModule* plugin = nullptr;
  for (const auto& m : p.modules)
    if (m.path.find("libtest_plugin.so") != std::string::npos) plugin = &m;
  ASSERT_NE(plugin, nullptr);
  uint64_t inside = 0;
  for (const auto& s : p.samples) {
    std::vector<uint64_t> frames = p.stack(s.node);
    if (!frames.empty() && p.moduleAt(frames[0], s.time) == plugin) inside += s.weight;
  }
  EXPECT_GT(inside, 150u) << "0.3 s in the plugin at 1 kHz";
}

TEST(Record, CrashStillLeavesAReadableProfile) {
  Recorded r = RecordAndCompare("segv", {PROGRAM_segv});
  EXPECT_EQ(r.plain.exit_code, 128 + SIGSEGV);
  format::RawProfile p = Load(r.profile);
  EXPECT_GT(p.samples.size(), 150u);
  ASSERT_TRUE(p.end.has_value());
  EXPECT_EQ(p.end->how, format::EndHow::kSignal);
  EXPECT_EQ(p.end->code, uint64_t(SIGSEGV));
}

TEST(Record, UnderscoreExitStillLeavesAProfile) {
  Recorded r = RecordAndCompare("underscore_exit", {PROGRAM_underscore_exit});
  EXPECT_EQ(r.plain.exit_code, 7);
  format::RawProfile p = Load(r.profile);
  ExpectSamplesMatchCpuTime(p);
  ASSERT_TRUE(p.end.has_value());
  EXPECT_EQ(p.end->how, format::EndHow::kUnderscoreExit);
  EXPECT_EQ(p.end->code, 7u);
}

TEST(Record, ProgramsOwnSigprofKeepsWorking) {
  Recorded r = RecordAndCompare("own_sigprof", {PROGRAM_own_sigprof});
  EXPECT_EQ(r.profiled.exit_code, 0) << r.profiled.out;
  Load(r.profile);
}

TEST(Record, ProgramSwitchesSamplingOffAndOn) {
  Recorded r = RecordAndCompare("paused", {PROGRAM_paused});
  format::RawProfile p = Load(r.profile);
  ASSERT_GE(p.states.size(), 2u);
  EXPECT_EQ(p.states[0].on, 0u);
  EXPECT_EQ(p.states[1].on, 1u);
  ASSERT_EQ(p.marks.size(), 1u);
  EXPECT_EQ(p.marks[0].label, "work");
  uint64_t sampled_ns = 0;
  for (const auto& s : p.samples) sampled_ns += s.weight * p.process->period_ns;
  // 0.2 s were meant to be seen and 0.3 s not.
  EXPECT_GT(sampled_ns, 140'000'000u);
  EXPECT_LT(sampled_ns, 260'000'000u);
}

TEST(Record, StartPausedRecordsNothingUntilStarted) {
  Recorded r = RecordAndCompare("start_paused", {PROGRAM_cpu_burn}, {"--start-paused"});
  format::RawProfile p = Load(r.profile);
  EXPECT_TRUE(p.samples.empty());
  ASSERT_FALSE(p.states.empty());
  EXPECT_EQ(p.states[0].on, 0u);
}

TEST(Record, WallClockSeesSleepsWhichLastTheirFullTime) {
  Recorded r = RecordAndCompare("sleeper", {PROGRAM_sleeper}, {"--clock", "wall"});
  EXPECT_NE(r.profiled.out.find("full=yes"), std::string::npos) << r.profiled.out;
  format::RawProfile p = Load(r.profile);
  EXPECT_EQ(p.process->clock, format::ClockMode::kWall);
  uint64_t samples = 0;
  for (const auto& s : p.samples) samples += s.weight;
  EXPECT_GT(samples, 250u) << "0.35 s asleep at 1 kHz of wall time";
}

TEST(Record, FollowExecWritesOneProfilePerImage) {
  Recorded r = RecordAndCompare("execer", {PROGRAM_execer}, {"--follow-exec"});
  EXPECT_EQ(r.plain.exit_code, 5);
  std::vector<std::string> profiles = ProfilesIn(r.dir);
  ASSERT_EQ(profiles.size(), 2u);
  format::RawProfile first = Load(r.profile);
  ASSERT_TRUE(first.end.has_value());
  EXPECT_EQ(first.end->how, format::EndHow::kExec);
  format::RawProfile second = Load(profiles[0] == r.profile ? profiles[1] : profiles[0]);
  EXPECT_TRUE(second.process->flags & format::kExecImage);
  EXPECT_GT(second.samples.size(), 100u);
}

TEST(Record, WithoutFollowExecTheNewImageIsNotProfiled) {
  Recorded r = RecordAndCompare("execer-nofollow", {PROGRAM_execer});
  EXPECT_EQ(ProfilesIn(r.dir).size(), 1u);
}

TEST(Record, FramePointerUnwindingWorksToo) {
  Recorded r = RecordAndCompare("cpu_burn_fp", {PROGRAM_cpu_burn}, {"--unwind", "fp", "-F", "500"});
  format::RawProfile p = Load(r.profile);
  EXPECT_EQ(p.process->unwinder, format::Unwinder::kFramePointers);
  EXPECT_EQ(p.process->period_ns, 2'000'000u);
  ExpectSamplesMatchCpuTime(p);
}

// ---- Bad input: one clear line and a non-zero exit, never a crash. ----

RunResult Hotline(const std::vector<std::string>& args, const std::string& dir) {
  std::vector<std::string> argv = {HOTLINE_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return Execute(argv, dir);
}

void ExpectOneLineError(const RunResult& run, const std::string& fragment) {
  EXPECT_NE(run.exit_code, 0);
  EXPECT_LT(run.exit_code, 128) << "crashed";
  EXPECT_NE(run.err.find(fragment), std::string::npos) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
}

TEST(RecordBadInput, MissingProgram) {
  RunResult run = Hotline({"record", "--", "/nonexistent/program"}, ScratchDir("bad"));
  ExpectOneLineError(run, "no such program");
  EXPECT_EQ(run.exit_code, 127);
}

TEST(RecordBadInput, ProgramNotInPath) {
  ExpectOneLineError(Hotline({"record", "no-such-program-anywhere"}, ScratchDir("bad")),
                     "no such program");
}

TEST(RecordBadInput, NotExecutable) {
  std::string dir = ScratchDir("bad");
  std::string file = dir + "/plain.txt";
  FILE* f = fopen(file.c_str(), "w");
  fputs("not a program\n", f);
  fclose(f);
  RunResult run = Hotline({"record", "--", file}, dir);
  ExpectOneLineError(run, "not executable");
  EXPECT_EQ(run.exit_code, 126);
}

TEST(RecordBadInput, StaticallyLinked) {
  ExpectOneLineError(Hotline({"record", "--", PROGRAM_static_hello}, ScratchDir("bad")),
                     "statically linked");
}

TEST(RecordBadInput, UnwritableOutput) {
  ExpectOneLineError(
      Hotline({"record", "-o", "/nonexistent-dir/x.hotline", "--", PROGRAM_cpu_burn}, ScratchDir("bad")),
      "/nonexistent-dir/x.hotline");
}

TEST(RecordBadInput, NoProgramAndUnknownFlag) {
  ExpectOneLineError(Hotline({"record"}, ScratchDir("bad")), "no program");
  ExpectOneLineError(Hotline({"record", "--bogus", "--", PROGRAM_cpu_burn}, ScratchDir("bad")),
                     "--bogus");
  ExpectOneLineError(Hotline({"record", "--toggle-signal", "SIGNOPE", "--", PROGRAM_cpu_burn},
                             ScratchDir("bad")),
                     "SIGNOPE");
}

TEST(RecordHelp, ExitsZero) {
  RunResult run = Hotline({"record", "--help"}, ScratchDir("help"));
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.out.find("--follow-exec"), std::string::npos);
}

TEST(Dump, PrintsEveryRecordAndTheDamage) {
  Recorded r = RecordAndCompare("dump", {PROGRAM_cpu_burn});
  RunResult whole = Hotline({"dump", r.profile}, r.dir);
  EXPECT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_NE(whole.out.find("PROCESS pid="), std::string::npos);
  EXPECT_NE(whole.out.find("SAMPLE t="), std::string::npos);
  EXPECT_NE(whole.out.find("END t="), std::string::npos);
  EXPECT_EQ(whole.out.find("# damage"), std::string::npos);

  // The newest *.hotline here is the default (the trailer names it as it was given).
  RunResult by_default = Hotline({"dump"}, r.dir);
  std::string records = whole.out.substr(0, whole.out.find("\n# "));
  EXPECT_TRUE(by_default.out.rfind(records, 0) == 0) << "dump without FILE read another file";
  EXPECT_NE(by_default.out.find("# p.hotline:"), std::string::npos);

  // Cut the file in the middle of its last chunk.
  struct stat st {};
  ASSERT_EQ(stat(r.profile.c_str(), &st), 0);
  std::string cut = r.dir + "/cut.hotline";
  RunResult copy = Execute({"/bin/cp", r.profile, cut}, r.dir);
  ASSERT_EQ(copy.exit_code, 0);
  ASSERT_EQ(truncate(cut.c_str(), st.st_size - 10), 0);
  RunResult truncated = Hotline({"dump", cut}, r.dir);
  EXPECT_EQ(truncated.exit_code, 0);
  EXPECT_NE(truncated.out.find("truncated tail"), std::string::npos) << truncated.out;
}

TEST(DumpBadInput, MissingTextAndNothingHere) {
  std::string dir = ScratchDir("dump-bad");
  ExpectOneLineError(Hotline({"dump", dir + "/missing.hotline"}, dir), "missing.hotline");
  std::string text = dir + "/text.hotline";
  FILE* f = fopen(text.c_str(), "w");
  fputs("hello\n", f);
  fclose(f);
  ExpectOneLineError(Hotline({"dump", text}, dir), "not a hotline profile");
  std::string empty_dir = ScratchDir("dump-empty");
  ExpectOneLineError(Hotline({"dump"}, empty_dir), "no *.hotline");
}

}  // namespace
}  // namespace hotline

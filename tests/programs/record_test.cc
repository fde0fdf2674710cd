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

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
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
using testing::RecordAndCompare;
using testing::Recorded;
using testing::RunResult;
using testing::ScratchDir;

// Every thread that used at least 200 ms of CPU got one sample per period, within 20%.
// The time `hotline report` shows for the profile: the sum of the flat profile's self times.
uint64_t ReportedNs(const std::string& profile, const std::string& dir) {
  RunResult report = Hotline({"report", "-C", "-m", profile}, dir);
  EXPECT_EQ(report.exit_code, 0) << report.err;
  uint64_t total = 0;
  std::istringstream rows(report.out);
  for (std::string row; std::getline(rows, row);) {
    std::istringstream fields(row);
    std::string percent, self;
    if (std::getline(fields, percent, '\t') && std::getline(fields, self, '\t'))
      total += std::stoull(self);
  }
  return total;
}

void ExpectSamplesMatchCpuTime(const format::RawProfile& p) {
  ASSERT_TRUE(p.process.has_value());
  auto per_thread = p.samplesPerThread();
  int checked = 0;
  // When the recorder fell behind (a loaded machine), the kernel drops records from its full
  // rings and the profile says so in a note: those samples are missing, so only the upper bound
  // holds then.
  bool dropped = std::any_of(p.notes.begin(), p.notes.end(), [](const std::string& note) {
    return note.find("the kernel dropped") != std::string::npos;
  });
  for (const format::RawThread& t : p.threads) {
    if (!t.cpu_ns || *t.cpu_ns < 200'000'000) continue;
    double sampled = double(per_thread[t.tid]) * double(p.process->period_ns);
    std::string what = "thread " + std::to_string(t.tid) + ": " +
                       std::to_string(per_thread[t.tid]) + " samples for " +
                       std::to_string(*t.cpu_ns) + " ns";
    if (dropped)
      EXPECT_LE(sampled / double(*t.cpu_ns), 1.2) << what;
    else
      EXPECT_NEAR(sampled / double(*t.cpu_ns), 1.0, 0.2) << what;
    ++checked;
  }
  EXPECT_GT(checked, 0) << "no thread with enough CPU time to check";
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
  // The child's exit status is its parent's: the recorder knows it only when the kernel still
  // kept it as the recorder saw the child end; else the END says so, never a made-up ending.
  ASSERT_TRUE(child.end.has_value());
  if (child.end->how != format::EndHow::kEnded) {
    EXPECT_EQ(child.end->how, format::EndHow::kExit);
    EXPECT_EQ(child.end->code, 4u);
  }
  // The runtime in the child sees its exit itself.
  Recorded s = RecordAndCompare("forker-signal", {PROGRAM_forker}, {"--sampler", "signal"});
  std::vector<std::string> both = ProfilesIn(s.dir);
  ASSERT_EQ(both.size(), 2u);
  format::RawProfile own = Load(both[0] == s.profile ? both[1] : both[0]);
  ASSERT_TRUE(own.end.has_value());
  EXPECT_EQ(own.end->code, 4u);
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

// Sampled from outside, the ending is the wait status's (an exit with its code); the runtime,
// which sees the _exit call itself, says _exit.
TEST(Record, UnderscoreExitStillLeavesAProfile) {
  for (const char* sampler : {"kernel", "signal"}) {
    Recorded r = RecordAndCompare(std::string("underscore_exit-") + sampler,
                                  {PROGRAM_underscore_exit}, {"--sampler", sampler});
    EXPECT_EQ(r.plain.exit_code, 7);
    format::RawProfile p = Load(r.profile);
    ExpectSamplesMatchCpuTime(p);
    ASSERT_TRUE(p.end.has_value()) << sampler;
    EXPECT_EQ(p.end->how, std::string(sampler) == "kernel" ? format::EndHow::kExit
                                                           : format::EndHow::kUnderscoreExit);
    EXPECT_EQ(p.end->code, 7u);
  }
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
  // 0.2 s were meant to be seen and 0.3 s not. The kernel samples from outside the program
  // all along; the report drops what fell while sampling was off.
  uint64_t sampled_ns = ReportedNs(r.profile, r.dir);
  EXPECT_GT(sampled_ns, 140'000'000u);
  EXPECT_LT(sampled_ns, 260'000'000u);
}

TEST(Record, StartPausedRecordsNothingUntilStarted) {
  Recorded r = RecordAndCompare("start_paused", {PROGRAM_cpu_burn}, {"--start-paused"});
  format::RawProfile p = Load(r.profile);
  EXPECT_EQ(ReportedNs(r.profile, r.dir), 0u);
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
  Recorded r = RecordAndCompare("cpu_burn_fp", {PROGRAM_cpu_burn},
                                {"--sampler", "signal", "--unwind", "fp", "-F", "500"});
  format::RawProfile p = Load(r.profile);
  EXPECT_EQ(p.process->unwinder, format::Unwinder::kFramePointers);
  EXPECT_EQ(p.process->period_ns, 2'000'000u);
  ExpectSamplesMatchCpuTime(p);
}

// ---- Bad input: one clear line and a non-zero exit, never a crash. ----

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

// Only the kernel can sample a static program (kernel_record_test): the in-process sampler
// says so.
TEST(RecordBadInput, StaticallyLinkedWithTheSignalSampler) {
  ExpectOneLineError(
      Hotline({"record", "--sampler", "signal", "--", PROGRAM_static_hello}, ScratchDir("bad")),
      "statically linked");
}

TEST(RecordBadInput, UnwritableOutput) {
  ExpectOneLineError(Hotline({"record", "-o", "/nonexistent-dir/x.hotline", "--", PROGRAM_cpu_burn},
                             ScratchDir("bad")),
                     "/nonexistent-dir/x.hotline");
}

TEST(RecordBadInput, NoProgramAndUnknownFlag) {
  ExpectOneLineError(Hotline({"record"}, ScratchDir("bad")), "no program");
  ExpectOneLineError(Hotline({"record", "--bogus", "--", PROGRAM_cpu_burn}, ScratchDir("bad")),
                     "--bogus");
  ExpectOneLineError(
      Hotline({"record", "--toggle-signal", "SIGNOPE", "--", PROGRAM_cpu_burn}, ScratchDir("bad")),
      "SIGNOPE");
}

// The command line answers a mistyped or missing command, version and help requests, and
// perf's habits, in its own words.
TEST(CommandLine, SaysWhatItWantsInItsOwnWords) {
  std::string dir = ScratchDir("cli");
  RunResult typo = Hotline({"recrod"}, dir);
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("unknown command 'recrod'; did you mean 'record'?"), std::string::npos)
      << typo.err;
  EXPECT_NE(typo.err.find("annotate"), std::string::npos) << typo.err;  // the commands listed
  RunResult bare = Hotline({}, dir);
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_NE(bare.err.find("Usage: hotline"), std::string::npos) << bare.err;
  for (const char* asked : {"-V", "--version", "version"}) {
    RunResult version = Hotline({asked}, dir);
    EXPECT_EQ(version.exit_code, 0) << asked;
    EXPECT_EQ(version.out.rfind("hotline ", 0), 0u) << asked << ": " << version.out;
  }
  RunResult help = Hotline({"help", "record"}, dir);
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--follow-exec"), std::string::npos) << help.out;
  ExpectOneLineError(Hotline({"report", "-t", "0"}, dir), "--top-count: must be above 0, not 0");
  ExpectOneLineError(Hotline({"report", "--top=5"}, dir),
                     "--top takes no value (how many top lines: -t N)");
  RunResult option_first = Hotline({"--bogus"}, dir);
  EXPECT_EQ(option_first.exit_code, 2);
  EXPECT_NE(option_first.err.find("unknown option '--bogus'"), std::string::npos);
  EXPECT_EQ(option_first.err.find("A subcommand is required"), std::string::npos);

  ExpectOneLineError(Hotline({"report", PROGRAM_cpu_burn}, dir),
                     "is a program, not a profile; did you mean test_cpu_burn.hotline?");

  // record names every profile it wrote, the forked child's too.
  RunResult forker = Hotline({"record", "-o", dir + "/f.hotline", "--", PROGRAM_forker}, dir);
  EXPECT_NE(forker.err.find("wrote " + dir + "/f.hotline ("), std::string::npos) << forker.err;
  EXPECT_NE(forker.err.find("samples; child of"), std::string::npos) << forker.err;

  // Heat colours: asked for, or on a terminal only (this output is a pipe).
  RunResult colored = Hotline({"report", "-C", "--color=always", dir + "/f.hotline"}, dir);
  EXPECT_NE(colored.out.find("\x1b["), std::string::npos) << colored.out;
  for (const char* mode : {"--color=never", "--color=auto"}) {
    RunResult plain = Hotline({"report", "-C", mode, dir + "/f.hotline"}, dir);
    EXPECT_EQ(plain.out.find("\x1b["), std::string::npos) << mode;
  }
  // Every command says which profile it read: report in its summary's first row, and both on
  // stderr when they chose the newest profile here themselves.
  RunResult summary = Hotline({"report", dir + "/f.hotline"}, dir);
  EXPECT_NE(summary.out.find("Summary\nprofile "), std::string::npos) << summary.out;
  EXPECT_NE(summary.out.find(dir + "/f.hotline\n"), std::string::npos) << summary.out;
  for (const char* command : {"report", "annotate"}) {
    RunResult newest = Hotline({command}, dir);
    EXPECT_NE(newest.err.find("(the newest profile here)"), std::string::npos)
        << command << ": " << newest.err;
  }
  // annotate takes a profile for one whatever its name.
  std::filesystem::copy_file(dir + "/f.hotline", dir + "/renamed");
  RunResult annotated = Hotline({"annotate", dir + "/renamed"}, dir);
  EXPECT_EQ(annotated.exit_code, 0) << annotated.err;
  EXPECT_NE(annotated.out.find("Index"), std::string::npos) << annotated.out;

  // What annotate was asked for and cannot find is said.
  RunResult missing =
      Hotline({"annotate", "--source-dir", dir + "/nowhere", dir + "/f.hotline", "nosuch.c"}, dir);
  EXPECT_NE(missing.err.find("--source-dir " + dir + "/nowhere: no such directory"),
            std::string::npos)
      << missing.err;
  EXPECT_NE(missing.err.find("hotline: annotate: nosuch.c matches no source file"),
            std::string::npos)
      << missing.err;
  EXPECT_EQ(missing.exit_code, 1);
  // A sweep's folder named where one profile is meant: what it is, and what reads it.
  std::filesystem::create_directory(dir + "/sweep.hotline");
  std::filesystem::copy_file(dir + "/f.hotline", dir + "/sweep.hotline/run1.hotline");
  RunResult folder = Hotline({"report", "-M", dir + "/sweep.hotline"}, dir);
  EXPECT_EQ(folder.exit_code, 1);
  EXPECT_NE(folder.err.find("sweep.hotline is a folder of 1 profile (a sweep's runs): `hotline "
                            "report -X"),
            std::string::npos)
      << folder.err;

  // A Python program is profiled as native code, and record says so.
  RunResult python = Hotline(
      {"record", "-o", dir + "/py.hotline", "--", "/usr/bin/python3", "-c", "print(1)"}, dir);
  EXPECT_EQ(python.exit_code, 0) << python.err;
  EXPECT_EQ(python.out, "1\n");
  EXPECT_NE(python.err.find("hotline: note: /usr/bin/python3 runs Python: its functions show as "
                            "the interpreter's C functions"),
            std::string::npos)
      << python.err;

  // perf's -g and bundled short flags.
  RunResult g = Hotline({"record", "-g", "-o", dir + "/g.hotline", "--", PROGRAM_cpu_burn}, dir);
  EXPECT_EQ(g.exit_code, 3) << g.err;
  EXPECT_NE(g.err.find("-g is not needed"), std::string::npos) << g.err;
  RunResult bundled =
      Hotline({"record", "-qF", "99", "-o", dir + "/b.hotline", PROGRAM_cpu_burn}, dir);
  EXPECT_EQ(bundled.exit_code, 3) << bundled.err;
  format::RawProfile p = Load(dir + "/b.hotline");
  ASSERT_TRUE(p.process.has_value());
  EXPECT_EQ(p.process->period_ns, 1'000'000'000u / 99);
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

// The listing of a sampled run, as a user builds and reads it: folded around the functions
// above the cutoff, line numbers, inclusive time on the lines that call, the program's own files
// only, and a warning when a source was edited after the build.
TEST(Annotate, FoldsShowsCallingLinesAndWarnsOfStaleSources) {
  std::string dir = ScratchDir("annotate_listing");
  for (const char* source : {SOURCE_cpu_burn, SOURCE_burn_h})
    ASSERT_EQ(Execute({"/bin/cp", source, dir}, dir).exit_code, 0);
  ASSERT_EQ(Execute({"/usr/bin/gcc", "-O1", "-g", "-o", dir + "/burn", dir + "/cpu_burn.c"}, dir)
                .exit_code,
            0);
  std::string profile = dir + "/burn.hotline";
  ASSERT_EQ(Hotline({"record", "-q", "-o", profile, "--", dir + "/burn"}, dir).exit_code, 3);

  RunResult folded = Hotline({"annotate", profile}, dir);
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  EXPECT_NE(folded.out.find(" folded\n"), std::string::npos) << folded.out;
  // main's line 10 calls heavy and light: nothing of its own, all of their time inclusive.
  std::string calling;
  std::istringstream rows(folded.out);
  for (std::string row; std::getline(rows, row);)
    if (row.find("double r = heavy() + light();") != std::string::npos) calling = row;
  ASSERT_NE(calling, "") << folded.out;
  std::istringstream cells(calling);
  std::string number, inclusive, percent;
  cells >> number >> inclusive >> percent;
  EXPECT_EQ(number, "10") << calling;
  EXPECT_TRUE(inclusive.ends_with("ms")) << calling;
  EXPECT_GT(std::stod(percent), 90.0) << calling;
  EXPECT_NE(folded.out.find("-- heavy: self "), std::string::npos) << folded.out;
  // libc's sources are the system's: left out, and said.
  EXPECT_NE(folded.err.find("system file"), std::string::npos) << folded.err;
  EXPECT_EQ(folded.out.find("libc-start"), std::string::npos) << folded.out;
  EXPECT_EQ(folded.err.find("modified after"), std::string::npos) << folded.err;

  RunResult whole = Hotline({"annotate", "--all", profile}, dir);
  EXPECT_EQ(whole.out.find(" folded\n"), std::string::npos) << whole.out;
  EXPECT_NE(whole.out.find("cpu_burn stderr line"), std::string::npos) << whole.out;

  // A source edited after the build.
  ASSERT_EQ(Execute({"/usr/bin/touch", "-d", "+1 hour", dir + "/cpu_burn.c"}, dir).exit_code, 0);
  RunResult stale = Hotline({"annotate", profile}, dir);
  EXPECT_NE(stale.err.find("warning: " + dir + "/cpu_burn.c was modified after " + dir +
                           "/burn was built"),
            std::string::npos)
      << stale.err;
}

}  // namespace
}  // namespace hotline

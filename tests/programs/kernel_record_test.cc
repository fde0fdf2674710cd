// `hotline record --sampler kernel` end to end: the program is sampled from outside through the
// kernel's perf_event rings, and the samples join its profile.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
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
using testing::RecordAndCompare;
using testing::Recorded;
using testing::RunResult;
using testing::ScratchDir;

// `hotline report -C -m`: inclusive time by function name, and the total.
// Each function's inclusive time, and in `total` the sampled time: the CPU time no sample stands
// for ([unsampled], which a loaded machine makes larger: the kernel's task-clock timer fires
// late) says nothing of how far stacks reach.
std::map<std::string, uint64_t> Inclusive(const std::string& profile, uint64_t* total) {
  RunResult r = Hotline({"report", "-C", "-m", profile}, ScratchDir("kernel-report"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, uint64_t> rows;
  *total = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, '\t');) cells.push_back(cell);
    if (cells.size() < 6) continue;
    if (cells.back() != "[unsampled]") *total += std::stoull(cells[1]);
    rows[cells.back()] = std::stoull(cells[2]);
  }
  return rows;
}

// A static program: no runtime can enter it, and every stack reaches main and _start.
TEST(KernelRecord, StaticProgramIsProfiledWithWholeStacks) {
  Recorded r = RecordAndCompare("kernel-static", {PROGRAM_static_burn}, {"--sampler", "kernel"});
  format::RawProfile p = Load(r.profile);
  ASSERT_TRUE(p.process.has_value());
  EXPECT_EQ(p.process->sampler, format::Sampler::kKernelRecorder);
  ASSERT_TRUE(p.end.has_value());
  EXPECT_EQ(p.end->how, format::EndHow::kExit);
  EXPECT_GT(p.samples.size(), 300u);
  uint64_t total = 0;
  auto rows = Inclusive(r.profile, &total);
  ASSERT_GT(total, 0u);
  EXPECT_GT(rows["main"], total * 9 / 10);
  EXPECT_GT(rows["_start"], total * 9 / 10);
}

// Free Pascal's default output: static, without libc, its CFI in a .debug_frame of fpc's own
// dialect. Whole stacks, and the lines of the Pascal source.
TEST(KernelRecord, StaticFreePascalProgramHasWholeStacksAndLines) {
  std::string program = PROGRAM_static_chain_pas;
  if (program.empty()) GTEST_SKIP() << "fpc not found";
  Recorded r = RecordAndCompare("kernel-fpc", {program});
  uint64_t total = 0;
  auto rows = Inclusive(r.profile, &total);
  ASSERT_GT(total, 0u);
  EXPECT_GT(rows["inner"], total * 9 / 10);
  EXPECT_GT(rows["outer"], total * 9 / 10);
  EXPECT_GT(rows["$main"], total * 9 / 10);
  RunResult top = Hotline({"report", "-T", "-m", r.profile}, r.dir);
  ASSERT_EQ(top.exit_code, 0) << top.err;
  // The hottest line is the loop's body in the Pascal source.
  std::istringstream rows_text(top.out);
  std::string first;
  std::getline(rows_text, first);
  EXPECT_NE(first.find("debug_frame_chain.pas"), std::string::npos) << top.out;
}

// Built without frame pointers: CFI unwinding by the recorder reaches main.
TEST(KernelRecord, StacksWithoutFramePointersReachMain) {
  Recorded r = RecordAndCompare("kernel-deep", {PROGRAM_deep_stack}, {"--sampler", "kernel"});
  uint64_t total = 0;
  auto rows = Inclusive(r.profile, &total);
  ASSERT_GT(total, 0u);
  EXPECT_GT(rows["main"], total * 9 / 10);
  EXPECT_GT(rows["leaf"], total * 8 / 10);
}

// 120 frames of C++ of a few hundred bytes each: with the defaults, every stack reaches main
// (the kernel copies 64 KiB of each), and none is counted as cut.
TEST(KernelRecord, DeepCppStacksReachMainWithTheDefaults) {
  Recorded r = RecordAndCompare("kernel-deep-cpp", {PROGRAM_deep_cpp, "chain"});
  uint64_t total = 0;
  auto rows = Inclusive(r.profile, &total);
  ASSERT_GT(total, 0u);
  EXPECT_GE(rows["main"], total * 99 / 100);
  format::RawProfile p = Load(r.profile);
  uint64_t cut = 0;
  for (const auto& s : p.samples)
    cut += (s.flags & (format::kSampleTruncated | format::kSampleBroken)) != 0;
  EXPECT_LE(cut * 100, p.samples.size()) << cut << " of " << p.samples.size();
}

// A stack deeper than any copy: the samples are counted as truncated, record says so with the
// cause, and the report puts their outer part under [truncated], not under functions that seem
// to have no caller.
TEST(KernelRecord, StacksDeeperThanTheCopyAreCountedAndWarned) {
  std::string dir = ScratchDir("kernel-abyss");
  RunResult r = Hotline({"record", "-o", dir + "/p.hotline", "--", PROGRAM_deep_cpp, "abyss", "400"},
                        dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("of the samples have stacks deeper than the 65528 bytes copied"),
            std::string::npos)
      << r.err;
  format::RawProfile p = Load(dir + "/p.hotline");
  uint64_t truncated = 0;
  for (const auto& s : p.samples) truncated += (s.flags & format::kSampleTruncated) != 0;
  EXPECT_GT(truncated * 10, p.samples.size() * 9) << truncated << " of " << p.samples.size();
  RunResult summary = Hotline({"report", dir + "/p.hotline"}, dir);
  EXPECT_NE(summary.out.find("truncated stacks"), std::string::npos);
  uint64_t total = 0;
  auto rows = Inclusive(dir + "/p.hotline", &total);
  EXPECT_GT(rows["[truncated]"], total * 9 / 10);
  EXPECT_EQ(rows.count("[broken stack]") ? rows["[broken stack]"] : 0, 0u);
}

// Two call paths of equal depth and frames, switched between at random (two_paths.cc): every
// stack is one path, whole from main to its leaf, never the outer part of one joined to the
// inner part of the other, at 1 kHz and at 10 kHz, where the unwinder's caches see the same
// addresses most often.
TEST(KernelRecord, StacksOfTwoAlternatingPathsAreNeverJoined) {
  for (const char* freq : {"1000", "10000"}) {
    std::string dir = ScratchDir(std::string("kernel-two-paths-") + freq);
    RunResult r = Hotline(
        {"record", "-q", "-F", freq, "-o", dir + "/p.hotline", "--", PROGRAM_two_paths}, dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(r.out, "two_paths 1\n");
    RunResult folded = Hotline({"export", "-f", "folded", "-o", "p.folded", "p.hotline"}, dir);
    ASSERT_EQ(folded.exit_code, 0) << folded.err;
    std::ifstream in(dir + "/p.folded");
    uint64_t total = 0, whole = 0, on_a_path = 0;
    for (std::string line; std::getline(in, line);) {
      size_t space = line.rfind(' ');
      ASSERT_NE(space, std::string::npos) << line;
      uint64_t weight = std::stoull(line.substr(space + 1));
      // CPU time no sample stands for (which a loaded machine makes larger) has no stack.
      if (line.starts_with("[unsampled]")) continue;
      total += weight;
      std::vector<std::string> frames;
      std::istringstream parts(line.substr(0, space));
      for (std::string frame; std::getline(parts, frame, ';');) frames.push_back(frame);
      bool a = line.find("PathA<") != std::string::npos;
      bool b = line.find("PathB<") != std::string::npos;
      EXPECT_FALSE(a && b) << freq << " Hz, a stack of both paths: " << line;
      if (std::find(frames.begin(), frames.end(), "main") != frames.end()) whole += weight;
      if (!a && !b) continue;
      on_a_path += weight;
      // A stack cut where the copy ended (a sample in the fault that maps a new stack page gets
      // no copy at all) is said to be cut: it is not joined to anything.
      if (line.find("[truncated]") != std::string::npos) continue;
      // Below main, the path's levels from 60 down, each once, with nothing between them.
      const char* path = a ? "PathA<" : "PathB<";
      auto first = std::find_if(frames.begin(), frames.end(),
                                [&](const std::string& f) { return f.find(path) != f.npos; });
      ASSERT_NE(first, frames.begin()) << line;
      EXPECT_EQ(*(first - 1), "main") << freq << " Hz: " << line;
      int level = 60;
      for (auto f = first; f != frames.end() && f->find(path) != f->npos; ++f, --level)
        EXPECT_NE(f->find(path + std::to_string(level) + ">"), std::string::npos)
            << freq << " Hz, level " << level << ": " << line;
    }
    EXPECT_GT(on_a_path, total * 9 / 10) << freq << " Hz";
    EXPECT_GE(whole * 100, total * 99) << freq << " Hz: " << whole << " of " << total;
  }
}

// 2,000 threads of 0.3 ms each, eight at a time: much of the time is the parent's in clone3,
// whose code after the `syscall` has no call-frame information (the new thread runs it too).
// Those stacks reach main through the clone3 wrapper's caller, not [broken stack].
TEST(KernelRecord, StacksInCloneReachMain) {
  std::string dir = ScratchDir("kernel-clone");
  RunResult r = Hotline(
      {"record", "-q", "-F", "10000", "-o", dir + "/p.hotline", "--", PROGRAM_short_threads}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  uint64_t total = 0;
  auto rows = Inclusive(dir + "/p.hotline", &total);
  uint64_t broken = rows.count("[broken stack]") ? rows["[broken stack]"] : 0;
  EXPECT_LT(broken * 20, total) << broken << " of " << total << " under [broken stack]";
  EXPECT_GT(rows["__pthread_create_2_1"], 0u);
}

// libm's sin and cos inline glibc's rounding-mode helpers into their bodies (with libc6-dbg, the
// debug info says so): the time is the out-of-line functions' a user called, __sin_* and
// __cos_*, as perf and gprof name it, not libc_feholdsetround_sse_ctx's.
TEST(KernelRecord, ASystemLibrarysTimeIsItsOutOfLineFunctions) {
  std::string dir = ScratchDir("kernel-sincos");
  RunResult r = Hotline({"record", "-q", "-o", dir + "/p.hotline", "--", PROGRAM_sincos}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  uint64_t total = 0, libm = 0;
  auto rows = Inclusive(dir + "/p.hotline", &total);
  for (const auto& [name, ns] : rows) {
    EXPECT_EQ(name.find("libc_fe"), std::string::npos) << name;
    if (name.starts_with("__sin") || name.starts_with("__cos")) libm += ns;
  }
  EXPECT_GT(libm, total / 2) << libm << " of " << total;
}

// A thread that blocks every signal is sampled like the others, with no signal queued in the
// program (a queue of 64 would fill otherwise).
TEST(KernelRecord, ThreadBlockingSignalsIsSampledForItsCpuTime) {
  std::string dir = ScratchDir("kernel-blocker");
  RunResult r =
      Execute({"/usr/bin/prlimit", "--sigpending=64:64", HOTLINE_BIN, "record", "-q", "--sampler",
               "kernel", "-o", dir + "/p.hotline", "--", PROGRAM_signal_blocker, "raw"},
              dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  format::RawProfile p = Load(dir + "/p.hotline");
  auto per_thread = p.samplesPerThread();
  int checked = 0;
  for (const format::RawThread& t : p.threads) {
    if (!t.cpu_ns || *t.cpu_ns < 200'000'000 || (t.flags & format::kThreadRuntime)) continue;
    double sampled = double(per_thread[t.tid]) * double(p.process->period_ns);
    EXPECT_NEAR(sampled / double(*t.cpu_ns), 1.0, 0.15) << "thread " << t.tid;
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

// The recorder outlives the program: killed by SIGKILL, it still gets its END record and every
// sample up to its death.
TEST(KernelRecord, KilledProgramStillEndsItsProfile) {
  std::string dir = ScratchDir("kernel-killed");
  RunResult r = Hotline(
      {"record", "-q", "--sampler", "kernel", "-o", dir + "/p.hotline", "--", PROGRAM_self_kill},
      dir);
  EXPECT_EQ(r.exit_code, 128 + SIGKILL);
  format::RawProfile p = Load(dir + "/p.hotline");
  ASSERT_TRUE(p.end.has_value());
  EXPECT_EQ(p.end->how, format::EndHow::kSignal);
  EXPECT_EQ(p.end->code, uint64_t(SIGKILL));
  EXPECT_GT(p.samples.size(), 250u);  // about 0.3 s burnt before the kill
}

// Where perf_event_open is refused (here by a seccomp filter, as in many containers), the
// program samples itself, and the profile and the report say so and why.
TEST(KernelRecord, RefusedPerfFallsBackToTheProgramsOwnSampling) {
  std::string dir = ScratchDir("kernel-refused");
  RunResult r = Execute(
      {PROGRAM_no_perf, HOTLINE_BIN, "record", "-o", dir + "/p.hotline", "--", PROGRAM_cpu_burn},
      dir);
  EXPECT_EQ(r.exit_code, 3) << r.err;  // cpu_burn's own
  EXPECT_NE(r.err.find("refused"), std::string::npos) << r.err;
  format::RawProfile p = Load(dir + "/p.hotline");
  ASSERT_TRUE(p.process.has_value());
  EXPECT_EQ(p.process->sampler, format::Sampler::kPosixCpuTimer);  // the runtime's perf too
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_NE(p.notes[0].find("Permission denied"), std::string::npos) << p.notes[0];
  uint64_t weight = 0;
  for (const format::SampleRecord& sample : p.samples) weight += sample.weight;
  EXPECT_GT(weight, 200u);  // about 0.3 s of CPU at 1 kHz
  RunResult report = Hotline({"report", "-C", dir + "/p.hotline"}, dir);
  EXPECT_NE(report.out.find("POSIX CPU-time timers"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("kernel sampling refused"), std::string::npos) << report.out;

  // Asked for by name, the kernel sampler is not replaced: one line says why.
  RunResult strict = Execute({PROGRAM_no_perf, HOTLINE_BIN, "record", "--sampler", "kernel", "-o",
                              dir + "/k.hotline", "--", PROGRAM_cpu_burn},
                             dir);
  EXPECT_EQ(strict.exit_code, 1);
  EXPECT_NE(strict.err.find("refused"), std::string::npos) << strict.err;
  EXPECT_EQ(std::count(strict.err.begin(), strict.err.end(), '\n'), 1) << strict.err;
}

// A running process of the same user: attach for 1 s, detach, and it goes on and ends as it
// would have, with its output and exit status; the profile holds both threads' second.
TEST(KernelRecord, AttachesToARunningProcessAndLeavesItAsItWas) {
  std::string dir = ScratchDir("kernel-attach");
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  pid_t target = fork();
  if (target == 0) {
    dup2(out[1], 1);
    close(out[0]);
    execl(PROGRAM_attach_target, PROGRAM_attach_target, (char*)nullptr);
    _exit(122);
  }
  close(out[1]);
  usleep(200'000);  // both threads spinning
  RunResult r = Hotline(
      {"record", "-p", std::to_string(target), "--duration", "1", "-o", dir + "/p.hotline"}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("runs on, detached"), std::string::npos) << r.err;
  int status = 0;
  ASSERT_EQ(waitpid(target, &status, 0), target);
  char text[64] = {};
  ASSERT_GT(read(out[0], text, sizeof text - 1), 0);
  close(out[0]);
  EXPECT_STREQ(text, "attach target done\n");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 5) << status;

  format::RawProfile p = Load(dir + "/p.hotline");
  ASSERT_TRUE(p.process.has_value());
  EXPECT_EQ(p.process->pid, uint64_t(target));
  EXPECT_EQ(p.process->exe, PROGRAM_attach_target);
  ASSERT_TRUE(p.end.has_value());
  EXPECT_EQ(p.end->how, format::EndHow::kDetached);
  EXPECT_EQ(testing::ProgramThreads(p), 2u);
  auto per_thread = p.samplesPerThread();
  // Each thread is sampled for the CPU time it got in that second: at most 1 s at 1 kHz, and how
  // much less depends on the machine's load (a busy runner gave one thread 89 ms), so only that
  // both were seen and neither beyond the rate decides.
  for (const format::RawThread& t : p.threads) {
    EXPECT_GT(per_thread[t.tid], 0u) << "thread " << t.tid;
    EXPECT_LE(per_thread[t.tid], 1100u) << "thread " << t.tid;
  }
  uint64_t total = 0;
  auto rows = Inclusive(dir + "/p.hotline", &total);
  EXPECT_GT(rows["spin"], total * 9 / 10);

  // Nothing to attach to: one line.
  RunResult gone = Hotline({"record", "-p", std::to_string(target)}, dir);
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_NE(gone.err.find("no such process"), std::string::npos) << gone.err;
}

// Without the privilege to sample the kernel's context switches (perf_event_paranoid 2, not
// root), wall-clock mode still shows each sleep where it happened: the recorder reads the stack
// of a thread it sees blocked.
TEST(KernelRecord, WallClockShowsWhereAnUnprivilegedProgramSleeps) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to become another user";
  std::string dir = ScratchDir("kernel-wall-nobody");
  chmod(dir.c_str(), 0777);
  RunResult reach = Execute({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                             "/usr/bin/test", "-x", HOTLINE_BIN},
                            dir);
  if (reach.exit_code != 0) GTEST_SKIP() << "user nobody cannot run " << HOTLINE_BIN;
  RunResult r =
      Execute({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", HOTLINE_BIN,
               "record", "-q", "--clock", "wall", "-o", dir + "/p.hotline", "--", PROGRAM_sleeper},
              dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  uint64_t total = 0;
  auto rows = Inclusive(dir + "/p.hotline", &total);
  // usleep(100 ms) and nanosleep(150 ms) both sleep in clock_nanosleep; poll waits 100 ms.
  EXPECT_NEAR(double(rows["__clock_nanosleep"]), 250e6, 30e6);
  EXPECT_NEAR(double(rows["__poll"]), 100e6, 30e6);
  EXPECT_GT(rows["main"], 330'000'000u);
}

}  // namespace
}  // namespace hotline

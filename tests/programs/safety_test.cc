// The program never notices hotline (DESIGN.md rule 1): each test is a way a real program was
// harmed under the runtime, run plain and profiled, with the harm checked for directly.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
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
using testing::ProgramThreads;
using testing::RecordAndCompare;
using testing::Recorded;
using testing::RunResult;
using testing::ScratchDir;

uint64_t Stat(const format::RawProfile& p, const std::string& key) {
  for (const auto& [name, value] : p.stats)
    if (name == key) return value;
  ADD_FAILURE() << "no STATS " << key;
  return 0;
}

// A Python script in a scratch directory of its own; "" when there is no /usr/bin/python3.
std::string PythonScript(const std::string& name, const std::string& text) {
  if (access("/usr/bin/python3", X_OK) != 0) return "";
  std::string path = ScratchDir(name + "-src") + "/" + name + ".py";
  std::ofstream(path) << text;
  return path;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A thread that blocks every signal must not pile samples up in the kernel's queue: with a
// queue of 64 (ulimit -i 64), the samples meant for the main thread found it full and the
// kernel's SIGIO killed the program (status 157).
TEST(Safety, ThreadBlockingSignalsNeitherFillsTheQueueNorGoesUnsampled) {
  std::string dir = ScratchDir("blocker");
  RunResult plain = Execute({PROGRAM_signal_blocker}, ScratchDir("blocker-plain"));
  RunResult profiled =
      Execute({"/usr/bin/prlimit", "--sigpending=64:64", HOTLINE_BIN, "record", "-q", "--sampler",
               "signal", "-o", dir + "/p.hotline", "--", PROGRAM_signal_blocker},
              dir);
  EXPECT_EQ(profiled.exit_code, 0) << profiled.err;
  EXPECT_EQ(profiled.out, plain.out);  // the worker sees the very mask it asked for
  format::RawProfile p = Load(dir + "/p.hotline");
  auto per_thread = p.samplesPerThread();
  ASSERT_EQ(p.threads.size(), 2u);
  for (const format::RawThread& t : p.threads) {
    ASSERT_TRUE(t.cpu_ns.has_value());
    double sampled = double(per_thread[t.tid]) * double(p.process->period_ns);
    EXPECT_NEAR(sampled / double(*t.cpu_ns), 1.0, 0.2) << "thread " << t.tid;
  }
  EXPECT_EQ(Stat(p, "sigio_absorbed"), 0u);
}

// Blocking with the raw system call gets past the interposed functions: the writer notices
// and pauses that thread's sampling, so the program lives and the queue stays bounded.
TEST(Safety, RawSignalBlockIsPausedNotQueued) {
  std::string dir = ScratchDir("blocker-raw");
  RunResult plain = Execute({PROGRAM_signal_blocker, "raw"}, ScratchDir("blocker-raw-plain"));
  RunResult profiled =
      Execute({"/usr/bin/prlimit", "--sigpending=64:64", HOTLINE_BIN, "record", "-q", "--sampler",
               "signal", "-o", dir + "/p.hotline", "--", PROGRAM_signal_blocker, "raw"},
              dir);
  EXPECT_EQ(profiled.exit_code, 0) << profiled.err;
  EXPECT_EQ(profiled.out, plain.out);
  format::RawProfile p = Load(dir + "/p.hotline");
  EXPECT_EQ(Stat(p, "threads_paused_blocking_signal"), 1u);
  ASSERT_TRUE(p.end.has_value());
}

// A program that closes every descriptor and then fills the numbers with its own files: its
// files are byte for byte what a plain run writes, and the profile is complete.
class DescriptorSafety : public ::testing::TestWithParam<const char*> {};

TEST_P(DescriptorSafety, ProgramFilesStayTheProgramsAndTheProfileComplete) {
  std::string how = GetParam();
  Recorded r = RecordAndCompare("closer-" + how, {PROGRAM_descriptor_closer, how});
  for (const char* name : {"a.txt", "b.txt", "c.txt"}) {
    std::string plain = ReadFile(r.plain_dir + "/" + name);
    EXPECT_FALSE(plain.empty());
    EXPECT_TRUE(ReadFile(r.dir + "/" + name) == plain) << name << " differs from the plain run's";
  }
  format::RawProfile p = Load(r.profile);
  ASSERT_TRUE(p.end.has_value());
  EXPECT_EQ(p.end->how, format::EndHow::kExit);
  EXPECT_GT(p.samples.size(), 30u);
}

// The writer thread opens the profile for each write, at the lowest free number for an instant:
// a program naming that number in dup2 and close meanwhile must get it as without hotline (a
// shell lost its descriptor 4 when the runtime closed what had become the shell's).
TEST(Safety, DescriptorsTheRuntimeOpensAreNotTheProgramsToName) {
  for (const std::vector<std::string>& options :
       {std::vector<std::string>{"--sampler", "signal"}, {"--heap-sample"}}) {
    Recorded r = RecordAndCompare("dup2-race", {PROGRAM_descriptor_closer, "dup2_race"}, options);
    EXPECT_EQ(r.profiled.out, "race done\n") << options[0];
    format::RawProfile p = Load(r.profile);
    EXPECT_TRUE(p.end.has_value()) << options[0];
  }
}

INSTANTIATE_TEST_SUITE_P(Closers, DescriptorSafety,
                         ::testing::Values("closefrom", "close_range", "close_loop"));

TEST(Safety, PythonClosingEveryDescriptorKeepsItsFiles) {
  std::string script = PythonScript("closer",
                                    "import os\n"
                                    "os.closerange(3, 1024)\n"
                                    "for i in range(3):\n"
                                    "    with open(f'out{i}.txt', 'w') as f:\n"
                                    "        for j in range(20000):\n"
                                    "            f.write(f'line {j} of file {i}\\n')\n"
                                    "print('done')\n");
  if (script.empty()) GTEST_SKIP() << "no /usr/bin/python3";
  Recorded r = RecordAndCompare("py-closer", {"/usr/bin/python3", script});
  for (const char* name : {"out0.txt", "out1.txt", "out2.txt"}) {
    std::string plain = ReadFile(r.plain_dir + "/" + name);
    EXPECT_FALSE(plain.empty());
    EXPECT_TRUE(ReadFile(r.dir + "/" + name) == plain) << name << " differs from the plain run's";
  }
  format::RawProfile p = Load(r.profile);
  EXPECT_TRUE(p.end.has_value());
}

// The main thread leaves through pthread_exit: the process must end with its last thread.
TEST(Safety, MainThreadPthreadExitEndsWithTheLastThread) {
  std::string dir = ScratchDir("pthread-exit");
  RunResult profiled = Execute({"/usr/bin/timeout", "-s", "KILL", "30", HOTLINE_BIN, "record", "-q",
                                "-o", dir + "/p.hotline", "--", PROGRAM_main_pthread_exit},
                               dir);
  EXPECT_EQ(profiled.exit_code, 0) << "the process did not end (137: killed by the timeout)";
  EXPECT_EQ(profiled.out, "worker 7 done\n");
  format::RawProfile p = Load(dir + "/p.hotline");
  ASSERT_TRUE(p.end.has_value());
  EXPECT_EQ(p.end->how, format::EndHow::kExit);
  EXPECT_EQ(p.end->code, 0u);
  EXPECT_GT(p.samples.size(), 100u);
}

// bash has its own unsetenv, which leaves the real environment alone: the programs a script
// runs must still not see the runtime, and `bash -c 'work; prog'` (bash execs the last
// command in place) must leave bash's profile, not prog's.
TEST(Safety, ScriptsRunTheirProgramsUnprofiled) {
  std::string dir = ScratchDir("bash");
  RunResult profiled =
      Execute({HOTLINE_BIN, "record", "-q", "-o", dir + "/p.hotline", "--", "/bin/bash", "-c",
               "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; /usr/bin/env"},
              dir);
  EXPECT_EQ(profiled.exit_code, 0);
  // No HOTLINE_ variable hotline set (one the test itself runs with passes through, as any of
  // the user's own would).
  std::istringstream environment(profiled.out);
  for (std::string line; std::getline(environment, line);)
    if (line.rfind("HOTLINE_", 0) == 0)
      EXPECT_NE(getenv(line.substr(0, line.find('=')).c_str()), nullptr) << line;
  EXPECT_EQ(profiled.out.find("libhotline-rt"), std::string::npos) << profiled.out;
  std::vector<std::string> profiles = ProfilesIn(dir);
  ASSERT_EQ(profiles.size(), 1u);
  format::RawProfile p = Load(profiles[0]);
  ASSERT_TRUE(p.process.has_value());
  EXPECT_EQ(p.process->exe, "/usr/bin/bash");
  EXPECT_GT(p.samples.size(), 50u);
}

// A stack overflow dies on a full stack: the fatal-signal handler needs a stack of its own to
// write the end of the profile (and the kernel sampler's recorder outlives the program).
TEST(Safety, StackOverflowStillEndsTheProfile) {
  for (const char* sampler : {"kernel", "signal"}) {
    Recorded r = RecordAndCompare(std::string("overflow-") + sampler, {PROGRAM_stack_overflow},
                                  {"--sampler", sampler});
    EXPECT_EQ(r.plain.exit_code, 128 + SIGSEGV);
    format::RawProfile p = Load(r.profile);
    ASSERT_TRUE(p.end.has_value()) << sampler;
    EXPECT_EQ(p.end->how, format::EndHow::kSignal);
    EXPECT_EQ(p.end->code, uint64_t(SIGSEGV));
    ASSERT_EQ(ProgramThreads(p), 1u) << sampler;
    for (const format::RawThread& t : p.threads) EXPECT_TRUE(t.cpu_ns.has_value()) << sampler;
    EXPECT_GT(p.samples.size(), 20u) << sampler;
  }
}

// Records `program` (a parent that ends many children with signals) under both samplers, with
// the runtime in every child, and checks that it printed `said`; returns each sampler's
// profiles, read, keyed by sampler. Every profile written must read: never an empty file, which
// a python3 multiprocessing pool's terminated worker once left.
std::map<std::string, std::vector<format::RawProfile>> RecordEndedChildren(
    const std::string& name, const char* program, const std::string& said) {
  std::map<std::string, std::vector<format::RawProfile>> read;
  for (const char* sampler : {"signal", "kernel"}) {
    std::string dir = ScratchDir(name + "-" + sampler);
    RunResult r = Hotline({"record", "-q", "--sampler", sampler, "-F", "10000", "--heap-sample",
                           "-o", dir + "/p.hotline", "--", program},
                          dir);
    EXPECT_EQ(r.exit_code, 0) << sampler << ": " << r.err;
    EXPECT_EQ(r.out, said) << sampler;
    for (const std::string& path : ProfilesIn(dir)) {
      struct stat st;
      EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
      EXPECT_GT(st.st_size, 0) << sampler << ": " << path;
      format::ReadStats stats;
      Expected<format::RawProfile> profile = format::LoadRawProfile(path, &stats);
      EXPECT_TRUE(profile.ok()) << sampler << ": " << path << ": " << profile.status().message();
      if (profile.ok()) read[sampler].push_back(std::move(*profile));
    }
  }
  return read;
}

// Children killed (SIGTERM, then SIGKILL a moment later) at every point of their profile's end:
// each leaves a profile that reads, or none.
TEST(Safety, KilledChildrenLeaveReadableProfilesOrNone) {
  auto read =
      RecordEndedChildren("killed-children", PROGRAM_killed_children, "killed_children 60\n");
  // Children killed before their first write have none; the parent's is always there.
  for (const char* sampler : {"signal", "kernel"}) EXPECT_GE(read[sampler].size(), 1u) << sampler;
}

// Children sent SIGTERM while they leave by exit, at every point of their profile's end: each
// profile that was begun is finished, with its END (a python3 pool's worker closed this way
// once lost it under --sampler signal, the signal's default action ending the process halfway).
TEST(Safety, ChildrenSignalledAsTheyExitKeepTheirEnd) {
  auto read =
      RecordEndedChildren("exiting-children", PROGRAM_exiting_children, "exiting_children 60\n");
  for (const auto& [sampler, profiles] : read) {
    EXPECT_GE(profiles.size(), 2u) << sampler;
    for (const format::RawProfile& p : profiles) EXPECT_TRUE(p.end.has_value()) << sampler;
  }
}

// Children terminated while they allocate, many inside the C library's allocator with its lock
// held, or inside the runtime's fork handler: none hangs (ending the profile in the signal
// handler waited for ever for the lock the interrupted call held), and each profile has its END.
TEST(Safety, ChildrenTerminatedInsideTheAllocatorEndAndKeepTheirEnd) {
  auto read = RecordEndedChildren("terminated-in-malloc", PROGRAM_terminated_in_malloc,
                                  "terminated_in_malloc 400 hung 0\n");
  for (const auto& [sampler, profiles] : read) {
    EXPECT_GE(profiles.size(), 1u) << sampler;
    for (const format::RawProfile& p : profiles) EXPECT_TRUE(p.end.has_value()) << sampler;
  }
}

// A child that ends before it records anything (most children of shells and build tools exec
// or exit at once) costs no profile file: the root profile counts it, with its CPU time.
TEST(Safety, ChildrenThatRecordNothingAreCountedNotFiled) {
  Recorded r = RecordAndCompare("quick-children", {PROGRAM_quick_children});
  std::vector<std::string> profiles = ProfilesIn(r.dir);
  ASSERT_EQ(profiles.size(), 2u);  // the parent's and the working child's
  format::RawProfile parent = Load(r.profile);
  EXPECT_EQ(Stat(parent, "children_without_profile"), 50u);
  EXPECT_GT(Stat(parent, "children_without_profile_cpu_ns"), 0u);
  format::RawProfile worker = Load(profiles[0] == r.profile ? profiles[1] : profiles[0]);
  ASSERT_TRUE(worker.process.has_value());
  EXPECT_TRUE(worker.process->flags & format::kForkedChild);
  EXPECT_GT(worker.samples.size(), 100u);
  ASSERT_TRUE(worker.end.has_value());
}

// record says how the program ended, as the shell would, and that a profile without its END
// record (the program was killed by SIGKILL) lacks its last samples.
TEST(Safety, RecordSaysHowTheProgramEnded) {
  std::string dir = ScratchDir("endings");
  // Sampled in the program, a SIGKILL leaves the profile without its end.
  RunResult killed = Hotline(
      {"record", "--sampler", "signal", "-o", dir + "/k.hotline", "--", PROGRAM_self_kill}, dir);
  EXPECT_EQ(killed.exit_code, 128 + SIGKILL);
  EXPECT_NE(killed.err.find("the program was killed by SIGKILL"), std::string::npos) << killed.err;
  EXPECT_NE(killed.err.find("has no END record"), std::string::npos) << killed.err;
  format::RawProfile p = Load(dir + "/k.hotline");
  EXPECT_FALSE(p.end.has_value());
  EXPECT_GT(p.samples.size(), 50u);  // what was flushed before the kill is there
  // Sampled by the kernel, the recorder outlives the program and ends the profile.
  RunResult kernel = Hotline({"record", "-o", dir + "/kk.hotline", "--", PROGRAM_self_kill}, dir);
  EXPECT_EQ(kernel.exit_code, 128 + SIGKILL);
  EXPECT_EQ(kernel.err.find("no END record"), std::string::npos) << kernel.err;
  format::RawProfile whole = Load(dir + "/kk.hotline");
  ASSERT_TRUE(whole.end.has_value());
  EXPECT_EQ(whole.end->how, format::EndHow::kSignal);
  EXPECT_EQ(whole.end->code, uint64_t(SIGKILL));
  EXPECT_GT(whole.samples.size(), 50u);

  RunResult crashed = Hotline({"record", "-o", dir + "/s.hotline", "--", PROGRAM_segv}, dir);
  EXPECT_NE(crashed.err.find("the program was killed by SIGSEGV"), std::string::npos)
      << crashed.err;
  EXPECT_EQ(crashed.err.find("no END record"), std::string::npos) << crashed.err;
  RunResult exited = Hotline({"record", "-o", dir + "/e.hotline", "--", PROGRAM_cpu_burn}, dir);
  EXPECT_NE(exited.err.find("the program exited with code 3"), std::string::npos) << exited.err;
}

// Threads too short for a sample: their CPU time is not lost silently. Every thread's CPU time
// is recorded, and the report's total, sampled + [unsampled], is their sum, with a warning.
class ShortThreads : public ::testing::TestWithParam<const char*> {};

TEST_P(ShortThreads, TimeIsAccountedAsUnsampled) {
  Recorded r = RecordAndCompare(std::string("short-threads-") + GetParam(), {PROGRAM_short_threads},
                                {"--sampler", GetParam()});
  format::RawProfile p = Load(r.profile);
  // A machine too busy to let the recorder read its rings in time loses records, thread ends
  // among them, and the profile says so; the sums below need every thread.
  for (const std::string& note : p.notes)
    if (note.find("the kernel dropped") != std::string::npos) {
      EXPECT_LT(ProgramThreads(p), 2001u + 1) << note;
      return;
    }
  // Under load the kernel sampler lost 100 to 900 of them when it asked for inherit_stat's
  // counts (perf_recorder.cc): every one must be there.
  ASSERT_EQ(ProgramThreads(p), 2001u) << r.profiled.err;
  // A thread's time is its CPU time, or its samples' when they say more: the kernel's clock can
  // sample a thread that ran less than a period, with the period's weight.
  auto per_thread = p.samplesPerThread();
  uint64_t cpu_ns = 0, sampled_ns = 0, time_ns = 0;
  for (const format::RawThread& t : p.threads) {
    ASSERT_TRUE(t.cpu_ns.has_value()) << "thread " << t.tid;
    cpu_ns += *t.cpu_ns;
    uint64_t sampled = per_thread[t.tid] * p.process->period_ns;
    sampled_ns += sampled;
    time_ns += std::max(sampled, *t.cpu_ns);
  }
  EXPECT_LT(sampled_ns, cpu_ns * 9 / 10) << "most of these threads end before a sample";

  RunResult report = Hotline({"report", "-C", "-m", r.profile}, r.dir);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.err.find("shown as [unsampled]"), std::string::npos) << report.err;
  uint64_t total = 0, unsampled = 0;
  std::istringstream rows(report.out);
  std::string row;
  while (std::getline(rows, row)) {
    std::vector<std::string> cells;
    std::istringstream fields(row);
    for (std::string cell; std::getline(fields, cell, '\t');) cells.push_back(cell);
    ASSERT_GE(cells.size(), 6u) << row;
    total += std::stoull(cells[1]);
    if (cells.back() == "[unsampled]") unsampled = std::stoull(cells[1]);
  }
  EXPECT_EQ(total, time_ns);
  EXPECT_EQ(unsampled, time_ns - sampled_ns);
}

INSTANTIATE_TEST_SUITE_P(Safety, ShortThreads, ::testing::Values("kernel", "signal"));

// A frame-pointer walk follows whatever rbp holds. In a thread that existed before the runtime
// (its stack bounds unknown) rbp pointing at an unreadable page killed the program (139); and
// Debian's python3, built without frame pointers, uses rbp as a general register throughout.
TEST(Safety, GarbageFramePointerNeverFaults) {
  std::string script = PythonScript("json-re",
                                    "import json, re\n"
                                    "s = 0\n"
                                    "for i in range(40000):\n"
                                    "    s += len(json.dumps({'a': i, 'b': [i, i * 2]}))\n"
                                    "    s += len(re.findall(r'\\d', str(i)))\n"
                                    "print(s)\n");
  for (int run = 0; run < 5 && !script.empty(); ++run) {
    Recorded r = RecordAndCompare("python-fp", {"/usr/bin/python3", script},
                                  {"--sampler", "signal", "--unwind", "fp"});
    EXPECT_EQ(r.profiled.exit_code, 0) << "run " << run;
  }
  for (const char* unwinder : {"fp", "dwarf"}) {
    for (int run = 0; run < 3; ++run) {
      Recorded r = RecordAndCompare(std::string("bad-rbp-") + unwinder, {PROGRAM_early_bad_rbp},
                                    {"--sampler", "signal", "--unwind", unwinder});
      EXPECT_EQ(r.profiled.exit_code, 0) << unwinder << " run " << run;
      format::RawProfile p = Load(r.profile);
      ASSERT_EQ(p.threads.size(), 2u);
      EXPECT_TRUE(p.threads[1].flags & format::kThreadPreexisting);
      EXPECT_GT(p.samplesPerThread()[p.threads[1].tid], 100u) << unwinder;
    }
  }
}

// The same hammered harder: hand-written assembler holding hostile values in rbp (unreadable and
// kernel addresses, misaligned, below the stack pointer, a frame that is its own caller, a chain
// into the heap) and -fomit-frame-pointer code, in the main thread, a pthread and a pthread on a
// stack of its own, sampled 20000 times a second, for many runs; and under the kernel sampler,
// whose unwinder reads only the copy of the stack the kernel gave it.
TEST(Safety, HostileFramePointersNeverFault) {
  std::vector<std::pair<std::string, std::vector<std::string>>> ways;
  for (int run = 0; run < 8; ++run)
    ways.push_back({"signal-fp", {"--sampler", "signal", "--unwind", "fp", "-F", "20000"}});
  ways.push_back({"signal-dwarf", {"--sampler", "signal", "--unwind", "dwarf", "-F", "20000"}});
  ways.push_back({"kernel", {"--sampler", "kernel", "-F", "20000"}});
  int run = 0;
  for (const auto& [name, options] : ways) {
    Recorded r = RecordAndCompare("hostile-rbp-" + name, {PROGRAM_garbage_rbp}, options);
    EXPECT_EQ(r.profiled.exit_code, 0) << name << " run " << run;
    ASSERT_EQ(r.plain.out.rfind("garbage_rbp ", 0), 0u) << r.plain.out;
    format::RawProfile p = Load(r.profile);
    uint64_t samples = 0;
    for (const auto& [tid, n] : p.samplesPerThread()) samples += n;
    // About 0.5 s of CPU in all, sampled 20000 times a second: far more than this many.
    EXPECT_GT(samples, 1000u) << name << " run " << run;
    ++run;
  }
}

TEST(Safety, ToggleSignalMustBeOneThatCanToggle) {
  std::string dir = ScratchDir("toggle");
  for (const char* sig : {"SEGV", "SIGBUS", "ILL", "FPE", "KILL", "STOP", "0", "11", "INT", "IO"}) {
    RunResult r = Hotline({"record", "--toggle-signal", sig, "--", "/bin/true"}, dir);
    EXPECT_EQ(r.exit_code, 2) << sig;
    EXPECT_NE(r.err.find("--toggle-signal"), std::string::npos) << sig << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  RunResult ok = Hotline({"record", "-q", "--toggle-signal", "USR1", "--", "/bin/true"}, dir);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// A preloaded library that exports libstdc++'s ABI takes it over in the host (dynamic_cast,
// the terminate handler): only the interposed functions and the C API may be visible.
TEST(Safety, RuntimeExportsOnlyItsInterfaceAndShims) {
  RunResult nm = Execute({"/usr/bin/nm", "-D", "--defined-only", "--format=posix", HOTLINE_RUNTIME},
                         ScratchDir("exports"));
  ASSERT_EQ(nm.exit_code, 0) << nm.err;
  const std::set<std::string> allowed = {
      // the C API and the tracing hooks
      "hotline_rt_start", "hotline_rt_stop", "hotline_rt_mark", "hotline_rt_watch",
      "hotline_rt_size", "hotline_rt_unwatch", "__cyg_profile_func_enter",
      "__cyg_profile_func_exit",
      // threads, signals, the life cycle
      "pthread_create", "pthread_setname_np", "pthread_sigmask", "sigprocmask", "sigaction",
      "signal", "sigaltstack", "exit", "_exit", "_Exit", "daemon", "dlclose", "posix_spawn",
      "posix_spawnp", "execve", "execv", "execvp", "execvpe", "execl", "execlp", "execle",
      "thrd_create",
      // glibc's signal 33 lent for these (setxid.h)
      "setuid", "setgid", "seteuid", "setegid", "setreuid", "setregid", "setresuid", "setresgid",
      "setgroups", "initgroups",
      // sleeps resumed after a sample
      "clock_nanosleep", "nanosleep", "sleep", "usleep", "poll", "epoll_wait", "select",
      // descriptors
      "close", "close_range", "closefrom", "dup2", "dup3", "pipe2",
      // the heap
      "malloc", "free", "calloc", "realloc", "posix_memalign", "aligned_alloc", "memalign",
      "valloc", "pvalloc", "mmap", "munmap"};
  std::istringstream lines(nm.out);
  std::string line;
  int exported = 0;
  while (std::getline(lines, line)) {
    std::string name = line.substr(0, line.find(' '));
    ++exported;
    // operator new and delete, every form: _Znwm, _Znam, _ZdlPv, _ZdaPv and their overloads.
    if (name.rfind("_Zn", 0) == 0 || name.rfind("_Zd", 0) == 0) continue;
    EXPECT_TRUE(allowed.count(name)) << "exported: " << name;
  }
  EXPECT_GT(exported, 40);
}

// The runtime's own memory never enters the heap profile: libunwind used to unmap its
// per-thread cache at each thread's end, shown as releases of blocks never allocated.
TEST(Safety, HeapProfileHoldsNoRuntimeMemory) {
  Recorded r = RecordAndCompare("heap-threads", {PROGRAM_heap_threads}, {"--heap"});
  format::RawProfile p = Load(r.profile);
  for (const format::FreeRecord& f : p.frees)
    EXPECT_NE(f.kind, format::FreeKind::kMunmap) << "a release of " << f.size << " bytes";
}

// A thread that ends while the process finishes (Python's shutdown lets the main thread go
// while a worker is still leaving) still has its CPU time, never 0: the in-process sampler's
// own counters keep it. (The kernel sampler's per-thread counts at exit can miss such a
// thread: docs/record.md.)
TEST(Safety, ThreadsEndingDuringShutdownKeepTheirCpuTime) {
  std::string script = PythonScript("threads",
                                    "import threading\n"
                                    "def work():\n"
                                    "    x = 0\n"
                                    "    for i in range(300000):\n"
                                    "        x += i\n"
                                    "ts = [threading.Thread(target=work) for _ in range(4)]\n"
                                    "for t in ts: t.start()\n"
                                    "for t in ts: t.join()\n");
  if (script.empty()) GTEST_SKIP() << "no /usr/bin/python3";
  for (int run = 0; run < 20; ++run) {  // the race showed in about 1 run of 8
    std::string dir = ScratchDir("py-threads");
    RunResult r = Execute({HOTLINE_BIN, "record", "-q", "--sampler", "signal", "-o",
                           dir + "/p.hotline", "--", "/usr/bin/python3", script},
                          dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    format::RawProfile p = Load(dir + "/p.hotline");
    EXPECT_EQ(ProgramThreads(p), 5u);
    for (const format::RawThread& t : p.threads) {
      ASSERT_TRUE(t.cpu_ns.has_value()) << "run " << run << ", thread " << t.tid << " of " << dir;
      EXPECT_GT(*t.cpu_ns, 0u) << "run " << run << ", thread " << t.tid;
    }
  }
}

}  // namespace
}  // namespace hotline

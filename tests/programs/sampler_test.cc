// The kernel sampler's ring reader (src/sampler/perf_recorder) on real programs, sampled from
// outside from their exec on: every thread is sampled, the one that blocks every signal too; a
// static binary is sampled and its mapping reported; a forked child's samples carry its pid;
// samples carry the user registers and a copy of the stack.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "sampler/perf_recorder.h"
#include "sampler/recording.h"
#include "sampler/stack_unwinder.h"
#include "symbolize/symbolizer.h"

namespace hotline {
namespace {

struct Collected : sampler::PerfHandler {
  // Unwinds each sample as it comes, as the recorder will (mappings arrive before samples).
  sampler::StackUnwinder unwinder;
  std::vector<sampler::UnwoundStack> stacks;
  std::map<uint32_t, uint64_t> samples_per_tid;
  std::map<uint32_t, uint64_t> samples_per_pid;
  std::vector<sampler::PerfMapping> mappings;
  std::vector<uint64_t> user_ips;
  uint64_t samples = 0, period_ns = 0, with_regs = 0, with_stack = 0;

  void onSample(const sampler::PerfSample& s) override {
    ++samples;
    ++samples_per_tid[s.tid];
    ++samples_per_pid[s.pid];
    period_ns += s.period;
    if (s.regs.valid) {
      ++with_regs;
      user_ips.push_back(s.regs.ip);
    }
    if (!s.stack.empty()) ++with_stack;
    if (s.regs.valid) stacks.push_back(unwinder.unwind(s, 128));
  }
  void onMapping(const sampler::PerfMapping& m) override {
    mappings.push_back(m);
    unwinder.onMapping(m);
  }
  void onTask(const sampler::PerfTask& t) override { unwinder.onTask(t); }
  void onComm(const sampler::PerfComm& c) override { unwinder.onComm(c); }
};

struct SampledRun {
  uint32_t pid = 0;     // the program's process
  uint64_t cpu_ns = 0;  // its CPU time, children included
  int status = -1;
};

// Starts `program`, samples it from its exec to its end (the child waits on a pipe until the
// events are open), and returns its CPU time.
SampledRun SampleProgram(const std::string& program, Collected& out) {
  SampledRun run;
  int gate[2];
  if (pipe2(gate, O_CLOEXEC) != 0) return run;
  pid_t child = fork();
  if (child == 0) {
    char go;
    ::close(gate[1]);
    if (read(gate[0], &go, 1) != 1) _exit(120);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    execl(program.c_str(), program.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ::close(gate[0]);
  run.pid = uint32_t(child);
  sampler::PerfRecorder recorder;
  sampler::PerfOptions options;
  options.enable_on_exec = true;
  // These tests count every sample: on a busy machine (ctest -j2 beside other builds) this loop
  // may not run for longer than 128 pages of 64 KiB stack copies last (8 samples). Root may
  // lock more: 16 MiB a CPU, about 250 samples, as `hotline record` takes at most.
  if (geteuid() == 0) options.ring_pages = 4096;
  Status opened = recorder.open(child, options);
  EXPECT_TRUE(opened.ok()) << opened.message();
  EXPECT_EQ(write(gate[1], "g", 1), 1);
  ::close(gate[1]);
  std::vector<pollfd> fds;
  for (int fd : recorder.descriptors()) fds.push_back(pollfd{fd, POLLIN, 0});
  for (;;) {
    poll(fds.data(), fds.size(), 50);
    recorder.drain(out);
    rusage usage;
    int status = 0;
    if (wait4(child, &status, WNOHANG, &usage) == child) {
      run.status = status;
      run.cpu_ns = uint64_t(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1'000'000'000u +
                   uint64_t(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1000u;
      break;
    }
  }
  recorder.drain(out);
  EXPECT_EQ(recorder.lost(), 0u);
  EXPECT_EQ(recorder.malformed(), 0u);
  return run;
}

TEST(KernelSampler, EveryThreadIsSampledTheOneBlockingSignalsToo) {
  Collected c;
  SampledRun run = SampleProgram(PROGRAM_signal_blocker, c);
  ASSERT_TRUE(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0);
  ASSERT_EQ(c.samples_per_tid.size(), 2u);
  for (const auto& [tid, n] : c.samples_per_tid) EXPECT_GT(n, 100u) << "thread " << tid;
  EXPECT_NEAR(double(c.period_ns) / double(run.cpu_ns), 1.0, 0.15)
      << c.samples << " samples for " << run.cpu_ns << " ns of CPU";
  EXPECT_EQ(c.with_regs, c.samples);  // a user program: every sample has its registers
  EXPECT_GT(c.with_stack, c.samples * 9 / 10);
}

TEST(KernelSampler, StaticBinaryIsSampledAndMapped) {
  Collected c;
  SampledRun run = SampleProgram(PROGRAM_static_burn, c);
  ASSERT_TRUE(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0);
  EXPECT_GT(c.samples, 250u);
  const sampler::PerfMapping* exe = nullptr;
  for (const sampler::PerfMapping& m : c.mappings)
    if (m.path == PROGRAM_static_burn && (m.prot & 4)) exe = &m;  // PROT_EXEC
  ASSERT_NE(exe, nullptr) << "no executable mapping of the program";
  // The program's own code, or the kernel's vDSO, through which clock_gettime (called between
  // rounds of the burn) enters the kernel: how many land there depends on the machine's load,
  // so the two together must hold every user address, and the program most of them.
  auto in = [](const sampler::PerfMapping& m, uint64_t ip) {
    return ip >= m.address && ip < m.address + m.length;
  };
  // A tick during the exec itself, after the kernel enabled the event and before the new image
  // runs, samples the registers the exec was called with: an address in the forked child's old
  // image, which is this test's own (the call to execl in libc).
  uint64_t inside = 0, in_vdso = 0, at_exec = 0;
  for (uint64_t ip : c.user_ips) {
    if (in(*exe, ip)) {
      ++inside;
      continue;
    }
    bool vdso = false;
    for (const sampler::PerfMapping& m : c.mappings) vdso |= m.path == "[vdso]" && in(m, ip);
    Dl_info own{};
    if (vdso)
      ++in_vdso;
    else if (dladdr(reinterpret_cast<void*>(ip), &own) != 0)
      ++at_exec;
    else
      ADD_FAILURE() << std::hex << "a sample at 0x" << ip << ", in none of the program's mappings";
  }
  EXPECT_LE(at_exec, 2u);
  EXPECT_EQ(inside + in_vdso + at_exec, c.user_ips.size());
  EXPECT_GT(inside, c.user_ips.size() / 2);
}

TEST(KernelSampler, ForkedChildrenAreSampledToo) {
  Collected c;
  SampledRun run = SampleProgram(PROGRAM_quick_children, c);
  ASSERT_TRUE(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0);
  // The working child burns about 0.3 s: its samples carry its own pid.
  uint64_t in_children = 0;
  for (const auto& [pid, n] : c.samples_per_pid)
    if (pid != run.pid) in_children += n;
  EXPECT_GT(in_children, 200u) << c.samples << " samples";
}

// The function names of each unwound stack that passes through `function` (innermost first).
std::vector<std::vector<std::string>> StacksThrough(const Collected& c,
                                                    const std::string& function) {
  symbolize::Symbolizer symbolizer;
  std::vector<std::vector<std::string>> result;
  for (const sampler::UnwoundStack& stack : c.stacks) {
    std::vector<std::string> names;
    for (size_t i = 0; i < stack.frames.size(); ++i) {
      uint64_t address = stack.frames[i];
      std::string name = "?";
      for (const sampler::PerfMapping& m : c.mappings) {
        if (address < m.address || address >= m.address + m.length || !(m.prot & 4)) continue;
        const symbolize::ResolvedAddress& r =
            symbolizer.resolve({m.path, "", sampler::LoadBias(m)}, address, i > 0);
        if (!r.frames.empty()) name = r.frames.back().function;
      }
      names.push_back(name);
    }
    if (std::find(names.begin(), names.end(), function) != names.end()) result.push_back(names);
  }
  return result;
}

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Built without frame pointers: only the CFI gets from the leaf of a 30-deep recursion to main.
TEST(KernelSampler, StacksUnwoundWithCfiReachMain) {
  Collected c;
  SampledRun run = SampleProgram(PROGRAM_deep_stack, c);
  ASSERT_TRUE(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0);
  auto stacks = StacksThrough(c, "leaf");
  ASSERT_GT(stacks.size(), 200u);
  size_t complete = 0;
  for (const auto& names : stacks)
    complete += Contains(names, "main") && names.size() >= 33;  // leaf, 31 descend, main
  EXPECT_GT(complete, stacks.size() * 9 / 10) << complete << " of " << stacks.size();
}

// The quick path (cached .eh_frame rules) gives the frames elfutils gives, sample for sample,
// and it is the one that unwinds nearly every sample of ordinary code.
struct BothWays : Collected {
  uint64_t compared = 0, differing = 0;
  std::string first_difference;
  void onSample(const sampler::PerfSample& s) override {
    if (!s.regs.valid) return;
    uint64_t quick_before = unwinder.quick(), slow_before = unwinder.slow();
    sampler::UnwoundStack quick = unwinder.unwind(s, 256);
    // Left to elfutils (and then perhaps on from a system call's caller, as in clone3): not the
    // quick path's frames.
    if (unwinder.quick() == quick_before || unwinder.slow() != slow_before) return;
    sampler::UnwoundStack slow = unwinder.unwindWithElfutils(s, 256);
    ++compared;
    if (quick.frames != slow.frames || quick.truncated != slow.truncated) {
      if (++differing == 1)
        first_difference = std::to_string(quick.frames.size()) + " frames against " +
                           std::to_string(slow.frames.size());
    }
  }
};

TEST(KernelSampler, QuickPathGivesTheFramesElfutilsGives) {
  for (const char* program : {PROGRAM_deep_stack, PROGRAM_deep_cpp, PROGRAM_signal_blocker}) {
    BothWays c;
    SampledRun run = SampleProgram(program, c);
    ASSERT_TRUE(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0) << program;
    EXPECT_GT(c.compared, 100u) << program;
    EXPECT_EQ(c.differing, 0u) << program << ": " << c.first_difference;
    EXPECT_GT(c.unwinder.quick(), (c.unwinder.quick() + c.unwinder.slow()) * 9 / 10) << program;
  }
}

TEST(KernelSampler, StaticBinaryStacksReachMain) {
  Collected c;
  SampledRun run = SampleProgram(PROGRAM_static_burn, c);
  ASSERT_TRUE(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0);
  auto stacks = StacksThrough(c, "main");
  // burn_cpu is inlined into main; its samples outside the vDSO must all reach main.
  EXPECT_GT(stacks.size(), c.stacks.size() * 8 / 10) << stacks.size() << " of " << c.stacks.size();
}

TEST(KernelSampler, AProcessThatDoesNotExistIsRefusedWithAMessage) {
  sampler::PerfRecorder recorder;
  Status s = recorder.open(999999999, {});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("999999999"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace hotline

// `hotline record [options] -- PROGRAM [ARGS]`: runs the program with the runtime preloaded
// (docs/runtime-protocol.md) and exits as the program did. docs/record.md is its manual.
#include "cli/record_command.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/signals.h"
#include "cli/commands.h"
#include "cli/kernel_sampling.h"
#include "cli/perl_program.h"
#include "cli/profile_path.h"
#include "cli/program_check.h"
#include "coverage/coverage.h"
#include "format/raw_profile.h"
#include "format/schema.h"
#include "format/writer.h"
#include "symbolize/variables.h"

namespace hotline::cli {
namespace {

// "USR2", "SIGUSR2", "12" or "none" → signal number (0 for none); -1 when no signal has that
// name or number.
int ParseSignal(const std::string& text) {
  if (text == "none") return 0;
  char* end = nullptr;
  long n = strtol(text.c_str(), &end, 10);
  if (!text.empty() && *end == '\0') return n > 0 && n < NSIG ? int(n) : -1;
  std::string name = text.rfind("SIG", 0) == 0 ? text.substr(3) : text;
  for (int sig = 1; sig < NSIG; ++sig) {
    const char* abbrev = sigabbrev_np(sig);
    if (abbrev && name == abbrev) return sig;
  }
  return -1;
}

std::string Absolute(const std::string& path) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  return ec ? path : absolute.lexically_normal().string();
}

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The runtime beside this executable (build/bin → build/lib, /usr/local/bin → /usr/local/lib),
// or $HOTLINE_RUNTIME.
Expected<std::string> FindRuntime() {
  if (const char* env = getenv("HOTLINE_RUNTIME"); env && *env) {
    if (access(env, R_OK) != 0)
      return Status::Error(std::string("HOTLINE_RUNTIME=") + env + ": not found");
    return std::string(env);
  }
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return Status::Error("cannot find the hotline executable's own path");
  self[n] = '\0';
  std::string dir = self;
  dir = dir.substr(0, dir.rfind('/'));
  std::string runtime = dir + "/../lib/libhotline-rt.so";
  if (access(runtime.c_str(), R_OK) != 0)
    return Status::Error("the runtime is missing: " + runtime + " (set HOTLINE_RUNTIME)");
  char resolved[PATH_MAX];
  return std::string(realpath(runtime.c_str(), resolved) ? resolved : runtime.c_str());
}

std::string RuntimeOptions(const RecordOptions& o, int toggle, bool kernel) {
  std::string trace = o.no_trace ? "none" : o.trace;
  // In auto mode the hooks count calls as soon as instrumented code calls them; a program
  // without -finstrument-functions never does, so counts costs it nothing.
  if (trace == "auto") trace = "counts";
  return fmt::format(
      "freq={},clock={},depth={},unwind={},paused={},toggle={},follow_exec={},trace={},heap={},"
      "heap_sample={},heap_seed={},sampler={}",
      o.counts_only ? 0u : o.freq, o.clock, o.max_depth, o.unwind, o.start_paused ? 1 : 0, toggle,
      o.follow_exec ? 1 : 0, trace, o.heap || o.heap_sample ? 1 : 0, o.heap_sample, o.heap_seed,
      kernel ? "kernel" : "signal");
}

// x86-64's debug address registers: the watchpoints a thread can have at once.
constexpr size_t kWatchpoints = 4;

format::WatchType WatchTypeOf(symbolize::VariableKind kind) {
  switch (kind) {
    case symbolize::VariableKind::kSigned:
      return format::WatchType::kSigned;
    case symbolize::VariableKind::kUnsigned:
      return format::WatchType::kUnsigned;
    case symbolize::VariableKind::kFloat:
      return format::WatchType::kFloat;
    case symbolize::VariableKind::kPointer:
      return format::WatchType::kPointer;
    case symbolize::VariableKind::kEnum:
      return format::WatchType::kEnum;
    case symbolize::VariableKind::kBool:
      return format::WatchType::kBool;
  }
  return format::WatchType::kUnsigned;
}

// The --watch variables resolved through the program's DWARF, as HOTLINE_WATCH gives them to
// the runtime (docs/runtime-protocol.md); every problem is an error before the program runs.
Expected<std::string> WatchSpecification(const RecordOptions& o, const ProgramInfo& program) {
  if (!program.is_elf || program.is_static || IsPerlProgram(program.path))
    return Status::Error(fmt::format(
        "--watch: {} {}", program.path,
        program.is_static ? "is statically linked: watchpoints need the runtime, which only a "
                            "dynamically linked program loads"
                          : "is not a native program: --watch reads variables from its DWARF"));
  size_t needed = o.watch.size() * (o.watch_reads ? 2 : 1);
  if (needed > kWatchpoints)
    return Status::Error(fmt::format(
        "--watch: {} variables{} need {} hardware watchpoints; a thread has {} (x86-64's debug "
        "registers)",
        o.watch.size(), o.watch_reads ? " with --watch-reads" : "", needed, kWatchpoints));
  std::string spec;
  std::vector<uint64_t> addresses;
  for (const std::string& name : o.watch) {
    if (name.empty() || name.find(';') != std::string::npos)
      return Status::Error(fmt::format("--watch {}: not a variable name", name));
    Expected<symbolize::Variable> v = symbolize::FindVariable(program.path, name);
    if (!v.ok()) return v.status();
    if (std::find(addresses.begin(), addresses.end(), v->address) != addresses.end())
      return Status::Error(fmt::format("--watch {}: named twice", name));
    addresses.push_back(v->address);
    if (!spec.empty()) spec += ';';
    spec += fmt::format("{:x},{},{},{},{}", v->address, v->size, uint32_t(WatchTypeOf(v->kind)),
                        o.watch_reads ? 1 : 0, name);
    for (const auto& [value, enumerator] : v->enumerators)
      spec += fmt::format(",{}={}", value, enumerator);
  }
  return spec;
}

// The child: environment, then exec. Reports an exec failure's errno through `error_fd`. With a
// `gate_fd` it waits for a byte there first while the recorder opens its events on it: 'k' when
// the kernel samples it (the runtime gets `kernel_options`), 's' when it must sample itself.
[[noreturn]] void RunChild(const ProgramInfo& program, const std::vector<std::string>& args,
                           const std::string& runtime, const std::string& output,
                           const std::string& options, const std::string& kernel_options,
                           const coverage::CoveragePlan& counts, int error_fd, int gate_fd) {
  char go = 's';
  if (gate_fd >= 0 && read(gate_fd, &go, 1) != 1) _exit(127);
  for (const auto& [name, value] : counts.environment) setenv(name.c_str(), value.c_str(), 1);
  std::string preload = runtime;
  if (const char* old = getenv("LD_PRELOAD"); old && *old) preload += std::string(":") + old;
  setenv("LD_PRELOAD", preload.c_str(), 1);
  setenv("HOTLINE_OUTPUT", output.c_str(), 1);
  setenv("HOTLINE_ROOT_PID", std::to_string(getpid()).c_str(), 1);
  setenv("HOTLINE_OPTIONS", (go == 'k' ? kernel_options : options).c_str(), 1);
  unsetenv("HOTLINE_LATER_IMAGE");
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(program.path.c_str(), argv.data());
  int err = errno;
  (void)!write(error_fd, &err, sizeof err);
  _exit(127);
}

pid_t g_child = 0;

void ForwardSignal(int sig) {
  if (g_child > 0) kill(g_child, sig);
}

// Waits for the child with the terminal's signals left to it, and forwards the ones sent to
// hotline itself; `pump` (when given) runs meanwhile, each call waiting a little. Returns the raw
// wait status.
int WaitForChild(pid_t child, const std::function<void()>& pump) {
  g_child = child;
  struct sigaction ignore {
  }, forward{}, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  forward.sa_handler = ForwardSignal;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  for (int sig : {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2}) sigaction(sig, &forward, nullptr);
  int status = 0;
  for (;;) {
    pid_t done = waitpid(child, &status, pump ? WNOHANG : 0);
    if (done == child || (done < 0 && errno != EINTR)) break;
    if (pump && done == 0) pump();
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  return status;
}

std::string HumanBytes(uint64_t bytes) {
  if (bytes >= (1u << 20)) return fmt::format("{:.1f} MiB", double(bytes) / (1u << 20));
  if (bytes >= 1024) return fmt::format("{:.1f} KiB", double(bytes) / 1024);
  return fmt::format("{} B", bytes);
}

// How the program ended, in the shell's words.
std::string DescribeEnding(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* name = sigabbrev_np(WTERMSIG(status));
    return fmt::format(
        "was killed by {}{}",
        name ? "SIG" + std::string(name) : fmt::format("signal {}", WTERMSIG(status)),
        WCOREDUMP(status) ? " (core dumped)" : "");
  }
  return "ended";
}

// Creates (or empties) the profile at `output`, saying why when it cannot.
bool CreateOutput(const std::string& output) {
  int probe = open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (probe < 0) {
    fmt::print(stderr, "hotline: cannot write the profile {}: {}\n", output, strerror(errno));
    return false;
  }
  close(probe);
  return true;
}

// The kernel sampler's settings, from the command line.
sampler::RecordingOptions SamplingOptions(const RecordOptions& o, const std::string& output) {
  sampler::RecordingOptions sampling;
  sampling.freq_hz = o.freq;
  sampling.max_depth = o.max_depth;
  sampling.stack_bytes = o.stack_bytes;
  sampling.wall_clock = o.clock == "wall";
  sampling.scratch_dir = std::filesystem::path(output).parent_path().string();
  return sampling;
}

// What a profile the recorder makes itself says of its sampling.
KernelSettings SettingsFor(const RecordOptions& o) {
  KernelSettings settings;
  settings.period_ns = 1'000'000'000u / o.freq;
  settings.max_depth = o.max_depth;
  settings.clock = o.clock == "wall" ? format::ClockMode::kWall : format::ClockMode::kCpu;
  settings.follow_exec = o.follow_exec;
  return settings;
}

// Appends a NOTE record to the profile at `output`.
void AddNote(const std::string& output, const std::string& text) {
  int fd = open(output.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return;
  format::Writer writer;
  writer.beginAppend(fd);
  writer.add(format::NoteRecord{ClockNs(CLOCK_MONOTONIC), text});
  writer.flush();
  close(fd);
}

// The other profiles this run wrote beside `output` (forked and executed children's), changed
// since `since`.
std::vector<std::string> ChildProfiles(const std::string& output, const timespec& since) {
  std::vector<std::string> found = ChildProfilePaths(output, 0);
  std::erase_if(found, [&](const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) != 0 || st.st_mtim.tv_sec < since.tv_sec;
  });
  return found;
}

uint64_t SampleWeight(const format::RawProfile& profile) {
  uint64_t samples = 0;
  for (const auto& s : profile.samples) samples += s.weight;
  return samples;
}

// One line per profile written and how the program ended, and a line for anything the user
// should know.
void PrintSummary(const std::string& output, int status, const timespec& started,
                  bool follow_exec) {
  format::ReadStats stats;
  Expected<format::RawProfile> profile = format::LoadRawProfile(output, &stats, false);
  if (!profile.ok()) {
    fmt::print(stderr, "hotline: warning: {}\n", profile.status().message());
    return;
  }
  uint64_t samples = SampleWeight(*profile);
  fmt::print(stderr, "hotline: wrote {} ({} samples, {} thread{}, {}); the program {}\n", output,
             samples, profile->threads.size(), profile->threads.size() == 1 ? "" : "s",
             HumanBytes(stats.file_bytes), DescribeEnding(status));
  for (const std::string& child : ChildProfiles(output, started)) {
    Expected<format::RawProfile> other = format::LoadRawProfile(child, nullptr, false);
    if (!other.ok() || !other->process) continue;
    fmt::print(stderr, "hotline: wrote {} ({} samples; {} {}, {})\n", child, SampleWeight(*other),
               other->process->flags & format::kExecImage ? "program executed by" : "child of",
               other->process->ppid, other->process->exe);
  }
  if (samples == 0 && !follow_exec && profile->end && profile->end->how == format::EndHow::kExec)
    fmt::print(stderr,
               "hotline: hint: the program executed another program before its first sample; "
               "--follow-exec profiles that one too\n");
  if (!profile->end)
    fmt::print(stderr,
               "hotline: warning: {} has no END record: the program {} before the runtime could "
               "finish the profile; up to about the last 100 ms of samples are missing\n",
               output, DescribeEnding(status));
  for (const std::string& reason : profile->disabled_reasons)
    fmt::print(stderr, "hotline: warning: the runtime reported: {}\n", reason);
  if (stats.damaged()) fmt::print(stderr, "hotline: warning: {}: {}\n", output, stats.summary());
}

// The kernel sampler's streams into their profiles, and what the user should know about it.
void AddRecording(const std::string& output, const RecordOptions& o, bool runtime,
                  sampler::Recording& recording, int status) {
  // Processes the program left running are given a moment to end (their runtime finishes
  // their profiles); the ones that do not keep their samples to themselves.
  for (int i = 0; i < 10 && std::any_of(recording.images().begin(), recording.images().end(),
                                        [](const auto& image) { return !image->ended; });
       ++i)
    recording.pump(20);
  Status finished = recording.finish();
  if (!finished.ok()) {
    fmt::print(stderr, "hotline: warning: {}\n", finished.message());
    return;
  }
  KernelSettings settings = SettingsFor(o);
  settings.runtime = runtime;
  format::EndRecord end = EndFromStatus(status);
  KernelResult added = AddKernelSamples(output, recording, settings, &end);
  if (!added.status.ok()) fmt::print(stderr, "hotline: warning: {}\n", added.status.message());
  if (o.clock == "wall" && !recording.switch_stacks())
    AddNote(output,
            "waits are shown with the stack the thread was seen blocked with (read from /proc "
            "while it waited), or for waits too short to be seen, its last sample's: the "
            "kernel gives switch-out stacks only at perf_event_paranoid 1 or below, or with "
            "CAP_PERFMON");
  if (recording.lost())
    AddNote(output, fmt::format("the kernel dropped {} records (rings full): those samples "
                                "are missing",
                                recording.lost()));
  if (o.quiet) return;
  if (added.samples_not_followed)
    fmt::print(stderr,
               "hotline: note: {} samples of programs executed by the program were not written "
               "(--follow-exec profiles them)\n",
               added.samples_not_followed);
  if (added.samples_short_children)
    fmt::print(stderr,
               "hotline: note: {} samples of children too short for a profile of their own (their "
               "exit) were not written\n",
               added.samples_short_children);
  if (added.samples_still_running)
    fmt::print(stderr,
               "hotline: note: {} samples of processes still running when the program ended "
               "were not written\n",
               added.samples_still_running);
}

volatile sig_atomic_t g_stop_attach = 0;

void StopAttach(int) { g_stop_attach = 1; }

// `record -p PID`: samples a running process from outside until Ctrl-C, --duration or its end,
// then closes the events: the process runs on as before, never having been stopped.
int RunAttach(const RecordOptions& o) {
  pid_t pid = pid_t(o.pid);
  if (kill(pid, 0) != 0) {
    fmt::print(stderr, "hotline: record -p {}: {}\n", pid,
               errno == ESRCH ? "no such process" : strerror(errno));
    return 1;
  }
  if (o.sampler == "signal" || o.counts_only || o.heap || o.heap_sample || o.freq == 0) {
    fmt::print(stderr,
               "hotline: record -p: a running process can only be sampled by the kernel (no "
               "--sampler signal, --heap, --heap-sample, --counts-only or -F 0)\n");
    return 2;
  }
  char exe[4096];
  ssize_t length = readlink(fmt::format("/proc/{}/exe", pid).c_str(), exe, sizeof exe - 1);
  std::string program = length > 0 ? std::string(exe, size_t(length)) : std::to_string(pid);
  std::string output = Absolute(o.output.empty() ? Basename(program) + ".hotline" : o.output);
  if (!CreateOutput(output)) return 1;
  sampler::Recording recording;
  sampler::RecordingOptions sampling = SamplingOptions(o, output);
  if (Status attached = recording.attach(pid, sampling); !attached.ok()) {
    fmt::print(stderr, "hotline: record -p {}: {}\n", pid, attached.message());
    unlink(output.c_str());
    return 1;
  }
  struct sigaction stop {};
  stop.sa_handler = StopAttach;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &stop, nullptr);
  if (!o.quiet)
    fmt::print(stderr, "hotline: sampling process {} ({}){}\n", pid, Basename(program),
               o.duration > 0 ? fmt::format(" for {} s", o.duration) : ", Ctrl-C to stop");
  uint64_t stop_at = o.duration > 0 ? ClockNs(CLOCK_MONOTONIC) + uint64_t(o.duration * 1e9) : 0;
  bool ended = false;
  while (!g_stop_attach) {
    recording.pump(50);
    if (kill(pid, 0) != 0 && errno == ESRCH) {
      ended = true;
      break;
    }
    if (stop_at && ClockNs(CLOCK_MONOTONIC) >= stop_at) break;
  }
  Status finished = recording.finish();
  if (!finished.ok()) {
    fmt::print(stderr, "hotline: {}\n", finished.message());
    return 1;
  }
  KernelSettings settings = SettingsFor(o);
  settings.follow_exec = true;  // what the process runs next is what was asked for
  // How a process that is not hotline's child ended is its parent's to know: no END then.
  format::EndRecord detached{ClockNs(CLOCK_MONOTONIC), format::EndHow::kDetached, 0};
  KernelResult added = AddKernelSamples(output, recording, settings, ended ? nullptr : &detached);
  if (!added.status.ok()) {
    fmt::print(stderr, "hotline: {}\n", added.status.message());
    return 1;
  }
  if (!o.quiet) {
    format::ReadStats stats;
    Expected<format::RawProfile> profile = format::LoadRawProfile(output, &stats);
    uint64_t samples = profile.ok() ? SampleWeight(*profile) : 0;
    fmt::print(stderr, "hotline: wrote {} ({} samples, {}); process {} {}\n", output, samples,
               HumanBytes(stats.file_bytes), pid, ended ? "ended meanwhile" : "runs on, detached");
  }
  return 0;
}

}  // namespace

int RunRecord(const RecordOptions& o, const std::vector<std::string>& command) {
  if (o.perf_g && !o.quiet)
    fmt::print(stderr, "hotline: note: -g is not needed: hotline always records whole stacks\n");
  if (o.pid && !command.empty()) {
    fmt::print(stderr, "hotline: record: either -p PID or a program to run, not both\n");
    return 2;
  }
  if (o.pid && !o.watch.empty()) {
    fmt::print(stderr,
               "hotline: record -p: --watch needs the runtime, which only a program "
               "hotline starts loads\n");
    return 2;
  }
  if (o.pid) return RunAttach(o);
  if (o.duration > 0) {
    fmt::print(stderr, "hotline: record: --duration goes with -p PID\n");
    return 2;
  }
  if (command.empty()) {
    fmt::print(stderr,
               "hotline: record: no program given (hotline record [options] -- PROGRAM [ARGS])\n");
    return 2;
  }
  int toggle = ParseSignal(o.toggle_signal);
  if (toggle < 0) {
    fmt::print(stderr,
               "hotline: record: --toggle-signal {}: no such signal (a name such as USR1, a "
               "number, or none)\n",
               o.toggle_signal);
    return 2;
  }
  if (const char* problem = toggle ? ToggleSignalProblem(toggle) : nullptr) {
    fmt::print(stderr, "hotline: record: --toggle-signal {} cannot toggle sampling: {}\n",
               o.toggle_signal, problem);
    return 2;
  }
  if (o.heap && o.heap_sample) {
    fmt::print(stderr,
               "hotline: record: --heap records every allocation, --heap-sample samples them: "
               "give one\n");
    return 2;
  }
  if (o.heap_seed && !o.heap_sample) {
    fmt::print(stderr, "hotline: record: --heap-seed goes with --heap-sample\n");
    return 2;
  }
  if (o.stack_bytes % 8 != 0) {
    fmt::print(stderr, "hotline: record: --stack-bytes {}: not a multiple of 8\n", o.stack_bytes);
    return 2;
  }
  int exit_code = 1;
  // The kernel samples, unless asked not to or there is nothing to sample.
  bool kernel = o.sampler != "signal" && !o.counts_only && o.freq > 0;
  Expected<ProgramInfo> program = InspectProgram(command[0], &exit_code, kernel);
  if (!program.ok()) {
    fmt::print(stderr, "hotline: {}\n", program.status().message());
    return exit_code;
  }
  if (program->gprof && !o.quiet)
    fmt::print(stderr,
               "hotline: note: {} is built with -pg: it is sampled as usual and writes its own "
               "gmon.out; hotline does not read mcount's counts (build with "
               "-finstrument-functions for exact calls)\n",
               command[0]);
  if (o.watch_reads && o.watch.empty()) {
    fmt::print(stderr, "hotline: record: --watch-reads goes with --watch\n");
    return 2;
  }
  std::string watch;
  if (!o.watch.empty()) {
    Expected<std::string> spec = WatchSpecification(o, *program);
    if (!spec.ok()) {
      fmt::print(stderr, "hotline: {}\n", spec.status().message());
      return 2;
    }
    watch = *spec;
  }
  Expected<std::string> runtime = FindRuntime();
  if (!runtime.ok()) {
    fmt::print(stderr, "hotline: {}\n", runtime.status().message());
    return 1;
  }
  std::string output = Absolute(o.output.empty() ? Basename(command[0]) + ".hotline" : o.output);
  if (!CreateOutput(output)) return 1;
  // Devel::Hotline writes a perl program's profile itself: no runtime, no native sampler.
  if (IsPerlProgram(program->path)) {
    uint64_t sample_period_ns = o.perl_sample && o.freq > 0 ? 1'000'000'000u / o.freq : 0;
    return RecordPerlProgram(program->path, command, output, sample_period_ns);
  }
  if (o.perl_sample) {
    fmt::print(stderr, "hotline: record: --perl-sample: {} is not a perl program\n", command[0]);
    unlink(output.c_str());
    return 2;
  }

  // A --coverage build: this run's exact line counts go to a directory of hotline's own.
  coverage::CoveragePlan counts;
  if (program->is_elf) {
    Expected<coverage::CoveragePlan> plan = coverage::PrepareCoverageRun(program->path);
    if (plan.ok()) {
      counts = *plan;
    } else {
      fmt::print(stderr, "hotline: warning: {}\n", plan.status().message());
    }
  }

  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    fmt::print(stderr, "hotline: cannot create a pipe: {}\n", strerror(errno));
    return 1;
  }
  std::string signal_options = RuntimeOptions(o, toggle, false);
  std::string kernel_options = RuntimeOptions(o, toggle, true);
  // The child waits at a gate until the recorder has opened its events on it (or knows it
  // cannot), and learns there which sampler runs.
  int gate[2] = {-1, -1};
  if (kernel && pipe2(gate, O_CLOEXEC) != 0) {
    fmt::print(stderr, "hotline: cannot create a pipe: {}\n", strerror(errno));
    return 1;
  }
  timespec started;
  clock_gettime(CLOCK_REALTIME, &started);
  if (watch.empty()) {
    unsetenv("HOTLINE_WATCH");
  } else {
    setenv("HOTLINE_WATCH", watch.c_str(), 1);  // for the child only
  }
  pid_t child = fork();
  if (!watch.empty() && child != 0) unsetenv("HOTLINE_WATCH");
  if (child < 0) {
    fmt::print(stderr, "hotline: cannot start {}: {}\n", command[0], strerror(errno));
    return 1;
  }
  if (child == 0) {
    close(pipe_fds[0]);
    if (gate[1] >= 0) close(gate[1]);
    RunChild(*program, command, *runtime, output, signal_options, kernel_options, counts,
             pipe_fds[1], gate[0]);
  }
  close(pipe_fds[1]);
  sampler::Recording recording;
  std::function<void()> pump;
  std::string fallback;  // why the program samples itself although the kernel was to
  if (kernel) {
    close(gate[0]);
    sampler::RecordingOptions sampling = SamplingOptions(o, output);
    Status opened = recording.start(child, Absolute(program->path), command, sampling);
    if (!opened.ok() && (o.sampler == "kernel" || program->is_static)) {
      fmt::print(stderr, "hotline: {}{}\n", opened.message(),
                 program->is_static ? " (a static program can be sampled only by the kernel)"
                                    : " (--sampler auto or signal samples in the program)");
      kill(child, SIGKILL);
      waitpid(child, nullptr, 0);
      unlink(output.c_str());
      return 1;
    }
    if (!opened.ok()) {
      kernel = false;
      fallback = opened.message() + ": the program samples itself (in-process signals)";
      if (!o.quiet) fmt::print(stderr, "hotline: note: {}\n", fallback);
    }
    (void)!write(gate[1], kernel ? "k" : "s", 1);
    close(gate[1]);
    if (kernel) pump = [&recording] { recording.pump(50); };
  }
  int status = WaitForChild(child, pump);
  int exec_errno = 0;
  bool exec_failed = read(pipe_fds[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno;
  close(pipe_fds[0]);
  if (exec_failed) {
    fmt::print(stderr, "hotline: {}: {}\n", command[0], strerror(exec_errno));
    unlink(output.c_str());
    coverage::RemoveCoverageDirectory(counts);
    return exec_errno == ENOENT ? 127 : 126;
  }
  if (kernel) AddRecording(output, o, !program->is_static, recording, status);
  if (!fallback.empty()) AddNote(output, "kernel sampling refused: " + fallback);
  if (counts.enabled) {
    Expected<coverage::CoverageData> data = coverage::CollectCoverage(counts);
    Status appended = data.ok() ? coverage::AppendCoverage(output, Absolute(program->path), *data)
                                : data.status();
    if (!appended.ok())
      fmt::print(stderr, "hotline: warning: no exact line counts: {}\n", appended.message());
    coverage::RemoveCoverageDirectory(counts);
  }
  if (!o.quiet) PrintSummary(output, status, started, o.follow_exec);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

namespace {
std::shared_ptr<RecordOptions> g_record_options;
}  // namespace

void RegisterRecordCommand(CLI::App& app, int* exit_code) {
  g_record_options = std::make_shared<RecordOptions>();
  CLI::App* cmd = app.add_subcommand("record",
                                     "run a program and profile it: hotline record "
                                     "[options] -- PROGRAM [ARGS]");
  g_record_options->Register(*cmd);
  cmd->footer("Everything from PROGRAM on (or after --) is the program's command line.");
  auto options = g_record_options;
  cmd->callback([options, exit_code] { *exit_code = RunRecord(*options, options->command); });
}

int TakeRecordProgram(CLI::App& app, int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) != "record" || !g_record_options) return argc;
  CLI::App* cmd = app.get_subcommand("record");
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    int program = -1;
    if (arg == "--") {
      program = i + 1;
    } else if (arg.size() > 2 && arg[0] == '-' && arg[1] == '-') {
      // A long option: skip its value when it takes one and was not written as --name=value.
      const CLI::Option* opt = cmd->get_option_no_throw(arg.substr(0, arg.find('=')));
      if (opt && opt->get_expected_max() > 0 && arg.find('=') == std::string::npos) ++i;
      continue;
    } else if (arg.size() > 1 && arg[0] == '-') {
      // Short options, bundled perhaps (-qF 99, -qF99): the first that takes a value takes the
      // rest of the word, or the next word when nothing of this one is left.
      for (size_t k = 1; k < arg.size(); ++k) {
        const CLI::Option* opt = cmd->get_option_no_throw(std::string("-") + arg[k]);
        if (opt && opt->get_expected_max() > 0) {
          if (k + 1 == arg.size()) ++i;
          break;
        }
      }
      continue;
    } else {
      program = i;
    }
    for (int k = program; k < argc; ++k) g_record_options->command.emplace_back(argv[k]);
    return i;  // CLI11 parses only what comes before
  }
  return argc;
}

}  // namespace hotline::cli

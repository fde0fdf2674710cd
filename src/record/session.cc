#include "record/session.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "base/clock.h"
#include "coverage/coverage.h"
#include "format/raw_profile.h"
#include "format/writer.h"
#include "record/exits.h"
#include "record/launch.h"
#include "record/perl.h"
#include "record/profiles.h"
#include "record/program.h"
#include "sampler/recording.h"
#include "symbolize/variables.h"

namespace hotline::record {
namespace {

std::string Absolute(const std::string& path) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  return ec ? path : absolute.lexically_normal().string();
}

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

const char* TraceName(TraceChoice trace) {
  switch (trace) {
    case TraceChoice::kAuto:
    case TraceChoice::kCounts:
      // In auto mode the hooks count calls as soon as instrumented code calls them.
      return "counts";
    case TraceChoice::kTimed:
      return "timed";
    case TraceChoice::kNone:
      return "none";
  }
  return "none";
}

// HOTLINE_OPTIONS (docs/runtime-protocol.md).
std::string RuntimeOptions(const Request& r, bool kernel) {
  return fmt::format(
      "freq={},clock={},depth={},unwind={},paused={},toggle={},follow_exec={},trace={},heap={},"
      "heap_sample={},heap_seed={},sampler={}",
      r.counts_only ? 0u : r.freq_hz, r.wall_clock ? "wall" : "cpu", r.max_depth,
      r.frame_pointers ? "fp" : "dwarf", r.start_paused ? 1 : 0, r.toggle_signal,
      r.follow_exec ? 1 : 0, TraceName(r.trace), r.heap || r.heap_sample ? 1 : 0, r.heap_sample,
      r.heap_seed, kernel ? "kernel" : "signal");
}

// Whether the program needs the runtime inside it although the kernel samples it from outside.
bool NeedsRuntime(const Request& r, const ProgramInfo& program) {
  return r.heap || r.heap_sample || !r.watch.empty() || r.trace == TraceChoice::kCounts ||
         r.trace == TraceChoice::kTimed ||
         (r.trace == TraceChoice::kAuto && program.instrumented) || program.calls_api;
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
Expected<std::string> WatchSpecification(const Request& r, const ProgramInfo& program) {
  if (!program.is_elf || program.is_static || IsPerlProgram(program.path))
    return Status::Error(fmt::format(
        "--watch: {} {}", program.path,
        program.is_static ? "is statically linked: watchpoints need the runtime, which only a "
                            "dynamically linked program loads"
                          : "is not a native program: --watch reads variables from its DWARF"));
  size_t needed = r.watch.size() * (r.watch_reads ? 2 : 1);
  if (needed > kWatchpoints)
    return Status::Error(fmt::format(
        "--watch: {} variables{} need {} hardware watchpoints; a thread has {} (x86-64's debug "
        "registers)",
        r.watch.size(), r.watch_reads ? " with --watch-reads" : "", needed, kWatchpoints));
  std::string spec;
  std::vector<uint64_t> addresses;
  for (const std::string& name : r.watch) {
    if (name.empty() || name.find(';') != std::string::npos)
      return Status::Error(fmt::format("--watch {}: not a variable name", name));
    Expected<symbolize::Variable> v = symbolize::FindVariable(program.path, name);
    if (!v.ok()) return v.status();
    if (std::find(addresses.begin(), addresses.end(), v->address) != addresses.end())
      return Status::Error(fmt::format("--watch {}: named twice", name));
    addresses.push_back(v->address);
    if (!spec.empty()) spec += ';';
    spec += fmt::format("{:x},{},{},{},{}", v->address, v->size, uint32_t(WatchTypeOf(v->kind)),
                        r.watch_reads ? 1 : 0, name);
    for (const auto& [value, enumerator] : v->enumerators)
      spec += fmt::format(",{}={}", value, enumerator);
  }
  return spec;
}

// The output, held for this recording alone: a second `hotline record` writing the same file
// at the same time would interleave two runs in it. The lock goes with the descriptor.
Expected<int> LockOutput(const std::string& output) {
  int fd = open(output.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Error("cannot write the profile " + output + ": " + strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    close(fd);
    if (err == EWOULDBLOCK)
      return Status::Error(output +
                           " is being written by another hotline record right now (-o names "
                           "another profile)");
    return Status::Error("cannot lock the profile " + output + ": " + strerror(err));
  }
  return fd;
}

// Appends a NOTE record to the profile at `path`.
Status AddNote(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return Status::Error(strerror(errno));
  format::Writer writer;
  writer.beginAppend(fd);
  writer.add(format::NoteRecord{ClockNs(CLOCK_MONOTONIC), text});
  errno = 0;
  bool ok = writer.flush();
  int err = errno;
  close(fd);
  return ok ? Status() : Status::Error(err ? strerror(err) : writer.error());
}

format::EndRecord EndOf(int wait_status) {
  format::EndRecord end;
  end.time = ClockNs(CLOCK_MONOTONIC);
  if (WIFSIGNALED(wait_status)) {
    end.how = format::EndHow::kSignal;
    end.code = uint64_t(WTERMSIG(wait_status));
  } else {
    end.how = format::EndHow::kExit;
    end.code = uint64_t(WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 0);
  }
  return end;
}

uint64_t SampleWeight(const format::RawProfile& profile) {
  uint64_t samples = 0;
  for (const auto& s : profile.samples) samples += s.weight;
  return samples;
}

// The profiles this run wrote: `first`, then the others beside it changed since `since`.
std::string DescribeEnding(int status);

// `follow_exec` and `wait_status` (-1: not hotline's child) say what a first profile without
// samples or without its END means.
std::vector<WrittenProfile> Written(const std::string& first, const timespec& since,
                                    const Listener& listen, bool* lost, bool follow_exec,
                                    int wait_status) {
  std::vector<WrittenProfile> written;
  std::vector<std::string> paths = {first};
  for (const std::string& path : ChildProfilePaths(first, 0)) {
    struct stat st;
    if (stat(path.c_str(), &st) == 0 && st.st_mtim.tv_sec >= since.tv_sec) paths.push_back(path);
  }
  for (size_t i = 0; i < paths.size(); ++i) {
    format::ReadStats stats;
    Expected<format::RawProfile> profile = format::LoadRawProfile(paths[i], &stats, false);
    if (!profile.ok()) {
      if (i == 0) {
        listen({Message::kError, profile.status().message()});
        *lost = true;
      }
      continue;
    }
    WrittenProfile w;
    w.path = paths[i];
    w.samples = SampleWeight(*profile);
    w.threads = profile->threads.size();
    w.bytes = stats.file_bytes;
    w.first = i == 0;
    if (profile->process) {
      w.ppid = uint32_t(profile->process->ppid);
      w.executed = profile->process->flags & format::kExecImage;
      w.exe = profile->process->exe;
    }
    if (i > 0 && !profile->process) continue;
    if (i == 0 && stats.truncated_bytes) {
      // Only a write that stopped short leaves a chunk cut off at the end of the file.
      listen({Message::kError,
              fmt::format("cannot write the profile {}: its last {} bytes are a chunk written "
                          "only in part (a full file system?)",
                          paths[i], stats.truncated_bytes)});
      *lost = true;
    } else if (stats.damaged()) {
      listen({Message::kWarning, paths[i] + ": " + stats.summary()});
    }
    if (i == 0) {
      for (const std::string& reason : profile->disabled_reasons)
        listen({Message::kWarning, "the runtime reported: " + reason});
      if (w.samples == 0 && !follow_exec && profile->end &&
          profile->end->how == format::EndHow::kExec)
        listen({Message::kHint,
                "the program executed another program before its first sample; --follow-exec "
                "profiles that one too"});
      if (!profile->end && wait_status >= 0)
        listen({Message::kWarning,
                paths[i] + " has no END record: the program " + DescribeEnding(wait_status) +
                    " before the runtime could finish the profile; up to about the last 100 ms "
                    "of samples are missing"});
    }
    written.push_back(std::move(w));
  }
  return written;
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

// The kernel sampler's settings, from the request.
sampler::RecordingOptions SamplingOptions(uint32_t freq_hz, uint32_t max_depth,
                                          uint32_t stack_bytes, bool wall_clock,
                                          const std::string& output) {
  sampler::RecordingOptions sampling;
  sampling.freq_hz = freq_hz;
  sampling.max_depth = max_depth;
  sampling.stack_bytes = stack_bytes;
  sampling.wall_clock = wall_clock;
  std::string dir = std::filesystem::path(output).parent_path().string();
  sampling.scratch_dir = dir.empty() ? "." : dir;
  return sampling;
}

// What a profile's recorder says of the samples that went into none, and of how it sampled.
void TellAboutSamples(const sampler::Recording& recording, const ProfilesResult& result,
                      const std::string& output, bool wall_clock, const Listener& listen) {
  if (wall_clock && !recording.switch_stacks())
    (void)AddNote(output,
                  "waits are shown with the stack the thread was seen blocked with (read from "
                  "/proc while it waited), or for waits too short to be seen, its last sample's: "
                  "the kernel gives switch-out stacks only at perf_event_paranoid 1 or below, or "
                  "with CAP_PERFMON");
  if (recording.lost())
    (void)AddNote(output, fmt::format("the kernel dropped {} records (rings full): the samples "
                                      "and thread ends among them are missing",
                                      recording.lost()));
  if (result.samples_not_followed)
    listen({Message::kNote,
            fmt::format("{} samples of programs executed by the program were not written "
                        "(--follow-exec profiles them)",
                        result.samples_not_followed)});
  if (result.samples_short_children)
    listen({Message::kNote,
            fmt::format("{} samples of children too short for a profile of their own (their "
                        "exit) were not written",
                        result.samples_short_children)});
  if (result.samples_still_running)
    listen({Message::kNote,
            fmt::format("{} samples of processes still running when the program ended were not "
                        "written",
                        result.samples_still_running)});
}

// The exits the kernel reported, for the images that ended without their status read.
void TakeExitStatuses(const ExitListener& exits, sampler::Recording& recording) {
  if (!exits.listening()) return;
  for (const auto& image : recording.images())
    if (image->ended && image->exit_status < 0)
      image->exit_status = exits.statusOf(pid_t(image->pid));
}

// The samples whose stacks are cut, and why, when they are more than 1% of the run's.
void TellAboutStacks(const sampler::Recording& recording, uint32_t stack_bytes,
                     const Listener& listen) {
  uint64_t samples = 0, past_copy = 0, depth = 0, broken = 0;
  for (const auto& image : recording.images()) {
    samples += image->samples;
    past_copy += image->stacks_past_copy;
    depth += image->stacks_truncated - image->stacks_past_copy;
    broken += image->stacks_broken;
  }
  auto share = [&](uint64_t n) { return samples ? 100.0 * double(n) / double(samples) : 0.0; };
  if (share(past_copy) > 1)
    listen({Message::kWarning,
            fmt::format("{:.1f}% of the samples have stacks deeper than the {} bytes copied with "
                        "each: their outer frames are missing (shown as [truncated]){}",
                        share(past_copy), stack_bytes,
                        stack_bytes < sampler::kMaxStackBytes
                            ? fmt::format("; --stack-bytes {} copies the most the kernel can",
                                          sampler::kMaxStackBytes)
                            : "; that is the most the kernel copies")});
  if (share(depth) > 1)
    listen({Message::kWarning,
            fmt::format("{:.1f}% of the samples have stacks deeper than --max-depth: their outer "
                        "frames are missing (shown as [truncated]); a larger --max-depth keeps "
                        "them",
                        share(depth))});
  if (share(broken) > 1)
    listen({Message::kWarning,
            fmt::format("{:.1f}% of the samples have stacks that stop at a frame without unwind "
                        "information (code built without it, or generated at run time): their "
                        "callers are missing (shown as [broken stack])",
                        share(broken))});
}

// The profile's first records when no runtime writes them: the process, as it starts.
sampler::SampledImage FirstImage(pid_t pid, pid_t ppid, const std::string& exe,
                                 const std::vector<std::string>& argv) {
  sampler::SampledImage image;
  image.pid = uint32_t(pid);
  image.ppid = uint32_t(ppid);
  image.start_time = ClockNs(CLOCK_MONOTONIC);
  image.exe = exe;
  image.argv = argv;
  return image;
}

}  // namespace

Expected<Outcome> RecordProgram(const Request& r, const Listener& listen, int* exit_code) {
  *exit_code = 1;
  Expected<ProgramInfo> program = InspectProgram(r.command[0], exit_code);
  if (!program.ok()) return program.status();
  *exit_code = 1;
  if (program->gprof)
    listen({Message::kNote,
            fmt::format("{} is built with -pg: it is sampled as usual and writes its own "
                        "gmon.out; hotline does not read mcount's counts (build with "
                        "-finstrument-functions for exact calls)",
                        r.command[0])});
  std::string watch;
  if (!r.watch.empty()) {
    Expected<std::string> spec = WatchSpecification(r, *program);
    if (!spec.ok()) {
      *exit_code = 2;
      return spec.status();
    }
    watch = *spec;
  }
  bool perl = IsPerlProgram(program->path);
  if (r.perl_sample && !perl) {
    *exit_code = 2;
    return Status::Error("record: --perl-sample: " + r.command[0] + " is not a perl program");
  }
  if (IsPythonProgram(program->path))
    listen({Message::kNote,
            r.command[0] +
                " runs Python: its functions show as the interpreter's C functions "
                "(_PyEval_EvalFrameDefault), as perf shows them; hotline has no Python front-end "
                "yet (docs/interpreters.md)"});
  // The kernel samples, unless asked not to or there is nothing to sample.
  bool kernel = r.sampler != SamplerChoice::kSignal && !r.counts_only && r.freq_hz > 0;
  bool runtime = !perl && program->is_elf && (!kernel || NeedsRuntime(r, *program));
  if (program->is_static && r.sampler == SamplerChoice::kSignal)
    return Status::Error(r.command[0] +
                         " is statically linked; LD_PRELOAD cannot profile it (--sampler kernel "
                         "samples it from outside, or link it dynamically)");
  if (program->is_static && (r.heap || r.heap_sample))
    return Status::Error(r.command[0] +
                         " is statically linked: the heap is recorded by the runtime, which only "
                         "a dynamically linked program loads");
  if (program->is_static) runtime = false;
  std::string runtime_path;
  // The runtime is looked for even when the kernel is to sample: a kernel that refuses leaves
  // the program to sample itself.
  if (!perl && program->is_elf && !program->is_static) {
    Expected<std::string> found = FindRuntime();
    if (!found.ok() && (runtime || r.sampler == SamplerChoice::kSignal)) return found.status();
    if (found.ok()) runtime_path = *found;
  }
  std::string output = Absolute(r.output.empty() ? Basename(r.command[0]) + ".hotline" : r.output);
  Expected<int> lock = LockOutput(output);
  if (!lock.ok()) return lock.status();
  struct LockHolder {
    int fd;
    ~LockHolder() { close(fd); }
  } holder{*lock};

  timespec started;
  clock_gettime(CLOCK_REALTIME, &started);
  Outcome outcome;
  // Devel::Hotline writes a perl program's profile itself: no runtime, no native sampler.
  if (perl) {
    if (int fd = open(output.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC); fd >= 0) close(fd);
    uint64_t period_ns = r.perl_sample && r.freq_hz > 0 ? 1'000'000'000u / r.freq_hz : 0;
    Expected<int> status = RecordPerlProgram(program->path, r.command, output, period_ns);
    if (!status.ok()) return status.status();
    outcome.ran = true;
    outcome.wait_status = *status;
    outcome.profiles =
        Written(output, started, listen, &outcome.profile_lost, r.follow_exec, *status);
    return outcome;
  }

  uint64_t features =
      (kernel || (runtime && r.freq_hz > 0 && !r.counts_only) ? uint64_t(format::kFeatureSamples)
                                                              : 0) |
      (runtime && r.trace != TraceChoice::kNone ? uint64_t(format::kFeatureTrace) : 0) |
      (runtime && (r.heap || r.heap_sample) ? uint64_t(format::kFeatureHeap) : 0);
  std::string first_path = output;
  Expected<int> output_fd = CreateProfile(&first_path, features, false);
  if (!output_fd.ok()) {
    unlink(output.c_str());
    return output_fd.status();
  }
  struct FdHolder {
    int fd;
    ~FdHolder() { close(fd); }
  } output_holder{*output_fd};

  // A --coverage build: this run's exact line counts go to a directory of hotline's own.
  coverage::CoveragePlan counts;
  if (program->is_elf) {
    Expected<coverage::CoveragePlan> plan = coverage::PrepareCoverageRun(program->path);
    if (plan.ok()) {
      counts = *plan;
    } else {
      listen({Message::kWarning, plan.status().message()});
    }
  }
  ChildPlan plan;
  plan.path = program->path;
  plan.argv = r.command;
  plan.environment = counts.environment;
  if (!runtime_path.empty()) {
    if (runtime)
      plan.runtime_with_kernel =
          RuntimeVariables(runtime_path, output, RuntimeOptions(r, true), watch);
    plan.runtime_sampling_itself =
        RuntimeVariables(runtime_path, output, RuntimeOptions(r, false), watch);
  }
  ExitListener exits;  // before the program starts, so that no exit goes unheard
  Launch launch;
  if (Status started_ok = launch.start(plan); !started_ok.ok()) {
    unlink(output.c_str());
    return started_ok;
  }

  ProfileSettings settings;
  settings.period_ns = 1'000'000'000u / std::max(r.freq_hz, 1u);
  settings.max_depth = r.max_depth;
  settings.clock = r.wall_clock ? format::ClockMode::kWall : format::ClockMode::kCpu;
  settings.features = features;
  settings.follow_exec = r.follow_exec;
  settings.start_paused = r.start_paused;
  settings.runtime = runtime;
  sampler::Recording recording;
  std::optional<ProfileFiles> files;
  char resolved[PATH_MAX];
  sampler::SampledImage first = FirstImage(
      launch.pid(), getpid(),
      realpath(program->path.c_str(), resolved) ? resolved : Absolute(program->path), r.command);
  std::string fallback;  // why the program samples itself although the kernel was to
  Status write_error;
  if (kernel) {
    Status opened = recording.start(
        launch.pid(), first.exe, r.command,
        SamplingOptions(r.freq_hz, r.max_depth, r.stack_bytes, r.wall_clock, output), *output_fd);
    if (!opened.ok() &&
        (r.sampler == SamplerChoice::kKernel || program->is_static || runtime_path.empty())) {
      launch.abandon();
      unlink(output.c_str());
      return Status::Error(opened.message() +
                           (program->is_static
                                ? " (a static program can be sampled only by the kernel)"
                                : " (--sampler auto or signal samples in the program)"));
    }
    if (!opened.ok()) {
      kernel = false;
      runtime = true;
      fallback = opened.message() + ": the program samples itself (in-process signals)";
      listen({Message::kNote, fallback});
    } else {
      files.emplace(output, *output_fd, settings, recording);
    }
  }
  if (!runtime) {
    settings.features = features;
    if (!kernel) settings.period_ns = 0, settings.sampler = format::Sampler::kNone;
    first.start_time = ClockNs(CLOCK_MONOTONIC);
    write_error = WriteProcessRecord(*output_fd, first, settings);
  }
  launch.open(kernel);

  bool sampling_on = !r.start_paused;
  std::function<void()> pump, toggle;
  if (kernel) {
    pump = [&] {
      recording.pump(50);
      exits.drain();
      TakeExitStatuses(exits, recording);
      files->update();
    };
    if (!runtime && r.start_paused) recording.noteSwitch(false, format::StateSource::kStartup);
    // Without the runtime in the program, hotline itself takes the toggle signal.
    if (!runtime && r.toggle_signal > 0)
      toggle = [&] {
        sampling_on = !sampling_on;
        recording.noteSwitch(sampling_on);
      };
  }
  int exec_errno = 0;
  int status = launch.wait(pump, r.toggle_signal, toggle, &exec_errno);
  if (exec_errno) {
    unlink(output.c_str());
    coverage::RemoveCoverageDirectory(counts);
    *exit_code = exec_errno == ENOENT ? 127 : 126;
    return Status::Error(r.command[0] + ": " + strerror(exec_errno));
  }
  outcome.ran = true;
  outcome.wait_status = status;
  format::EndRecord end = EndOf(status);
  if (kernel) {
    // Processes the program left running are given a moment to end (their runtime finishes
    // their profiles); the ones that do not keep their samples to themselves.
    for (int i = 0; i < 10 && std::any_of(recording.images().begin(), recording.images().end(),
                                          [](const auto& image) { return !image->ended; });
         ++i)
      pump();
    Status finished = recording.finish();
    exits.drain();
    TakeExitStatuses(exits, recording);
    ProfilesResult result = files->finish(&end);
    if (write_error.ok()) write_error = finished.ok() ? result.status : finished;
    TellAboutSamples(recording, result, output, r.wall_clock, listen);
    TellAboutStacks(recording, r.stack_bytes, listen);
  } else if (!runtime && write_error.ok()) {
    format::Writer tail;
    tail.beginAppend(*output_fd);
    tail.add(end);
    errno = 0;
    if (!tail.flush()) write_error = Status::Error(errno ? strerror(errno) : tail.error());
  }
  if (!fallback.empty()) (void)AddNote(output, "kernel sampling refused: " + fallback);
  if (counts.enabled) {
    Expected<coverage::CoverageData> data = coverage::CollectCoverage(counts);
    Status appended = data.ok() ? coverage::AppendCoverage(output, Absolute(program->path), *data)
                                : data.status();
    if (!appended.ok()) listen({Message::kWarning, "no exact line counts: " + appended.message()});
    if (appended.ok() && !data->instructions_note.empty())
      listen({Message::kNote, data->instructions_note});
    coverage::RemoveCoverageDirectory(counts);
  }
  if (!write_error.ok()) {
    outcome.profile_lost = true;
    std::string text = write_error.message();
    if (text.rfind("cannot write the profile", 0) != 0)
      text = "cannot write the profile " + output + ": " + text;
    listen({Message::kError, text + "; the program " + DescribeEnding(status)});
  }
  outcome.profiles = Written(output, started, listen, &outcome.profile_lost, r.follow_exec, status);
  return outcome;
}

Expected<Outcome> AttachProcess(const AttachRequest& r, const volatile sig_atomic_t* stop,
                                const Listener& listen, int* exit_code) {
  *exit_code = 1;
  if (kill(r.pid, 0) != 0)
    return Status::Error(fmt::format("record -p {}: {}", r.pid,
                                     errno == ESRCH ? "no such process" : strerror(errno)));
  char exe[4096];
  ssize_t length = readlink(fmt::format("/proc/{}/exe", r.pid).c_str(), exe, sizeof exe - 1);
  std::string program = length > 0 ? std::string(exe, size_t(length)) : std::to_string(r.pid);
  std::string output = Absolute(r.output.empty() ? Basename(program) + ".hotline" : r.output);
  Expected<int> lock = LockOutput(output);
  if (!lock.ok()) return lock.status();
  struct LockHolder {
    int fd;
    ~LockHolder() { close(fd); }
  } holder{*lock};
  std::string first_path = output;
  Expected<int> output_fd = CreateProfile(&first_path, format::kFeatureSamples, false);
  if (!output_fd.ok()) return output_fd.status();
  struct FdHolder {
    int fd;
    ~FdHolder() { close(fd); }
  } output_holder{*output_fd};
  sampler::Recording recording;
  if (Status attached = recording.attach(
          r.pid, SamplingOptions(r.freq_hz, r.max_depth, r.stack_bytes, r.wall_clock, output),
          *output_fd);
      !attached.ok()) {
    unlink(output.c_str());
    return Status::Error(fmt::format("record -p {}: {}", r.pid, attached.message()));
  }
  ProfileSettings settings;
  settings.period_ns = 1'000'000'000u / std::max(r.freq_hz, 1u);
  settings.max_depth = r.max_depth;
  settings.clock = r.wall_clock ? format::ClockMode::kWall : format::ClockMode::kCpu;
  settings.follow_exec = true;  // what the process runs next is what was asked for
  Status write_error = WriteProcessRecord(*output_fd, *recording.images().front(), settings);
  ProfileFiles files(output, *output_fd, settings, recording);
  ExitListener exits;
  listen({Message::kNote, fmt::format("sampling process {} ({}){}", r.pid, Basename(program),
                                      r.duration_s > 0 ? fmt::format(" for {} s", r.duration_s)
                                                       : ", Ctrl-C to stop")});
  uint64_t stop_at = r.duration_s > 0 ? ClockNs(CLOCK_MONOTONIC) + uint64_t(r.duration_s * 1e9) : 0;
  Outcome outcome;
  outcome.ran = true;
  while (!*stop) {
    recording.pump(50);
    exits.drain();
    TakeExitStatuses(exits, recording);
    files.update();
    // Gone, or a zombie its parent has not waited for yet: the kernel reported its end.
    if ((kill(r.pid, 0) != 0 && errno == ESRCH) || recording.images().front()->ended) {
      outcome.attached_ended = true;
      break;
    }
    if (stop_at && ClockNs(CLOCK_MONOTONIC) >= stop_at) break;
  }
  Status finished = recording.finish();
  exits.drain();
  TakeExitStatuses(exits, recording);
  // How a process that is not hotline's child ended is its parent's to know, unless the kernel
  // still kept its exit status when the recorder saw it end.
  const sampler::SampledImage& root = *recording.images().front();
  uint64_t now = ClockNs(CLOCK_MONOTONIC);
  format::EndRecord end{now, format::EndHow::kDetached, 0};
  if (outcome.attached_ended) {
    end = root.exit_status >= 0 ? EndOf(root.exit_status)
                                : format::EndRecord{now, format::EndHow::kEnded, 0};
    if (root.exit_status >= 0) outcome.wait_status = root.exit_status;
  }
  ProfilesResult result = files.finish(&end);
  if (write_error.ok()) write_error = finished.ok() ? result.status : finished;
  TellAboutSamples(recording, result, output, r.wall_clock, listen);
  TellAboutStacks(recording, r.stack_bytes, listen);
  if (!write_error.ok()) {
    outcome.profile_lost = true;
    listen({Message::kError, write_error.message()});
  }
  timespec since{};
  outcome.profiles = Written(output, since, listen, &outcome.profile_lost, true, -1);
  outcome.profiles.resize(std::min<size_t>(outcome.profiles.size(), 1));
  return outcome;
}

}  // namespace hotline::record

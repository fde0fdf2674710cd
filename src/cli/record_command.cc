// `hotline record [options] -- PROGRAM [ARGS]`: the options, turned into a record::Request
// (src/record does the recording), and what the recording says, printed. Exits as the program
// did. docs/record.md is its manual.
#include "cli/record_command.h"

#include <fmt/core.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/signals.h"
#include "cli/commands.h"
#include "record/session.h"

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

// What the recording says, as lines on stderr: errors always, the rest unless --quiet.
record::Listener Printer(bool quiet) {
  return [quiet](const record::Message& m) {
    if (quiet && m.kind != record::Message::kError) return;
    const char* prefix = m.kind == record::Message::kNote      ? "note: "
                         : m.kind == record::Message::kHint    ? "hint: "
                         : m.kind == record::Message::kWarning ? "warning: "
                                                               : "";
    fmt::print(stderr, "hotline: {}{}\n", prefix, m.text);
  };
}

// The exit status of `hotline record`: the program's, as a shell reports it (128+N for a death by
// signal N), or 125 when its profile could not be written (docs/record.md).
int ExitCodeOf(const record::Outcome& outcome) {
  if (outcome.profile_lost) return kProfileLostExitCode;
  int status = outcome.wait_status;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// One line per profile written and how the program ended, and a line for anything the user
// should know.
void PrintSummary(const record::Outcome& outcome) {
  for (const record::WrittenProfile& w : outcome.profiles) {
    if (w.first) {
      fmt::print(stderr, "hotline: wrote {} ({} samples, {} thread{}, {}); the program {}\n",
                 w.path, w.samples, w.threads, w.threads == 1 ? "" : "s", HumanBytes(w.bytes),
                 DescribeEnding(outcome.wait_status));
    } else {
      fmt::print(stderr, "hotline: wrote {} ({} samples; {} {}, {})\n", w.path, w.samples,
                 w.executed ? "program executed by" : "child of", w.ppid, w.exe);
    }
  }
}

volatile sig_atomic_t g_stop_attach = 0;

void StopAttach(int) { g_stop_attach = 1; }

int RunAttach(const RecordOptions& o) {
  if (o.sampler == "signal" || o.counts_only || o.heap || o.heap_sample || o.freq == 0) {
    fmt::print(stderr,
               "hotline: record -p: a running process can only be sampled by the kernel (no "
               "--sampler signal, --heap, --heap-sample, --counts-only or -F 0)\n");
    return 2;
  }
  record::AttachRequest r;
  r.pid = pid_t(o.pid);
  r.duration_s = o.duration;
  r.output = o.output;
  r.freq_hz = o.freq;
  r.wall_clock = o.clock == "wall";
  r.max_depth = o.max_depth;
  r.stack_bytes = o.stack_bytes;
  struct sigaction stop {};
  stop.sa_handler = StopAttach;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &stop, nullptr);
  int exit_code = 1;
  Expected<record::Outcome> outcome =
      record::AttachProcess(r, &g_stop_attach, Printer(o.quiet), &exit_code);
  if (!outcome.ok()) {
    fmt::print(stderr, "hotline: {}\n", outcome.status().message());
    return exit_code;
  }
  if (!o.quiet && !outcome->profiles.empty()) {
    const record::WrittenProfile& w = outcome->profiles.front();
    fmt::print(stderr, "hotline: wrote {} ({} samples, {}); process {} {}\n", w.path, w.samples,
               HumanBytes(w.bytes), o.pid,
               !outcome->attached_ended ? "runs on, detached"
               : outcome->wait_status >= 0 && WIFEXITED(outcome->wait_status) &&
                       outcome->wait_status != 0
                   ? "ended meanwhile: it " + DescribeEnding(outcome->wait_status)
                   : "ended meanwhile");
  }
  return outcome->profile_lost ? kProfileLostExitCode : 0;
}

}  // namespace

int RunRecord(const RecordOptions& o, const std::vector<std::string>& command) {
  if (o.perf_g && !o.quiet)
    fmt::print(stderr,
               "hotline: note: -g is not needed: hotline records the stacks of every sample\n");
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
  if (o.watch_reads && o.watch.empty()) {
    fmt::print(stderr, "hotline: record: --watch-reads goes with --watch\n");
    return 2;
  }
  record::Request r;
  r.command = command;
  r.output = o.output;
  r.freq_hz = o.freq;
  r.wall_clock = o.clock == "wall";
  r.max_depth = o.max_depth;
  r.frame_pointers = o.unwind == "fp";
  r.start_paused = o.start_paused;
  r.toggle_signal = toggle;
  r.follow_exec = o.follow_exec;
  std::string trace = o.no_trace ? "none" : o.trace;
  r.trace = trace == "counts"  ? record::TraceChoice::kCounts
            : trace == "timed" ? record::TraceChoice::kTimed
            : trace == "none"  ? record::TraceChoice::kNone
                               : record::TraceChoice::kAuto;
  r.sampler = o.sampler == "kernel"   ? record::SamplerChoice::kKernel
              : o.sampler == "signal" ? record::SamplerChoice::kSignal
                                      : record::SamplerChoice::kAuto;
  r.stack_bytes = o.stack_bytes;
  r.heap = o.heap;
  r.heap_sample = o.heap_sample;
  r.heap_seed = o.heap_seed;
  r.counts_only = o.counts_only;
  r.perl_sample = o.perl_sample;
  r.watch = o.watch;
  r.watch_reads = o.watch_reads;
  int exit_code = 1;
  Expected<record::Outcome> outcome = record::RecordProgram(r, Printer(o.quiet), &exit_code);
  if (!outcome.ok()) {
    fmt::print(stderr, "hotline: {}\n", outcome.status().message());
    return exit_code;
  }
  if (!o.quiet) PrintSummary(*outcome);
  return ExitCodeOf(*outcome);
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

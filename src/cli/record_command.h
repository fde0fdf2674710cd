// `hotline record`'s options and the recording itself, shared with `hotline sweep`, which
// records the program once per size.
#pragma once

#include <string>
#include <vector>

#include "cli/commands.h"
#include "sampler/perf_recorder.h"

namespace hotline::cli {

// Everything `hotline record` accepts, declared once: Register() derives parsing and --help.
struct RecordOptions {
  std::string output;
  unsigned freq = 1000;
  std::string clock = "cpu";
  unsigned max_depth = 256;
  std::string unwind = "dwarf";
  bool start_paused = false;
  std::string toggle_signal = "USR2";
  bool follow_exec = false;
  std::string trace = "auto";
  std::string sampler = "auto";
  unsigned stack_bytes = sampler::kMaxStackBytes;
  bool no_trace = false;
  bool heap = false;
  uint64_t heap_sample = 0;  // bytes between heap samples on average; 0: --heap's every allocation
  uint64_t heap_seed = 0;
  bool counts_only = false;
  bool quiet = false;
  bool perl_sample = false;
  bool perf_g = false;  // perf's -g: stacks are always recorded here
  int pid = 0;
  double duration = 0;
  std::vector<std::string> watch;  // variables, by source name
  bool watch_reads = false;
  std::vector<std::string> command;  // set by TakeRecordProgram, never parsed by CLI11

  void Register(CLI::App& cmd) {
    cmd.add_option("-o,--output", output, "the profile to write (default: PROGRAM.hotline here)");
    cmd.add_option("-F,--freq", freq, "samples per second of CPU time per thread (0: none)")
        ->check(CLI::Range(0u, 100000u));
    cmd.add_option("--clock", clock, "cpu: CPU time of each thread; wall: elapsed time")
        ->check(CLI::IsMember({"cpu", "wall"}));
    cmd.add_option("--max-depth", max_depth, "frames kept per stack (deeper: truncated)")
        ->check(CLI::Range(1u, 4096u));
    cmd.add_option("--unwind", unwind, "dwarf: CFI via libunwind; fp: frame pointers")
        ->check(CLI::IsMember({"dwarf", "fp"}));
    cmd.add_flag("--start-paused", start_paused,
                 "start with sampling off (hotline_start() or the toggle signal turns it on)");
    cmd.add_option("--toggle-signal", toggle_signal,
                   "signal that toggles sampling from outside: a name (USR2, SIGUSR1), a number, "
                   "or none");
    cmd.add_flag("--follow-exec", follow_exec, "keep profiling programs the program executes");
    cmd.add_option("--trace", trace,
                   "-finstrument-functions tracing: auto (counts when the program is "
                   "instrumented), counts, timed, none")
        ->check(CLI::IsMember({"auto", "counts", "timed", "none"}));
    cmd.add_flag("--no-trace", no_trace, "same as --trace=none");
    cmd.add_option("--sampler", sampler,
                   "kernel: hotline reads the kernel's perf_event rings from outside the program "
                   "(every thread, static programs too); signal: each thread samples itself, in "
                   "the program; auto: kernel, or signal where perf_event_open is refused")
        ->check(CLI::IsMember({"auto", "kernel", "signal"}));
    cmd.add_option("--stack-bytes", stack_bytes,
                   "kernel sampler: bytes of user stack copied with each sample, for unwinding "
                   "(a multiple of 8; the default is the most the kernel copies)")
        ->check(CLI::Range(512u, sampler::kMaxStackBytes));
    cmd.add_flag("--heap", heap,
                 "record every allocation and release (malloc family, new/delete, anonymous "
                 "mmap) with its stack; combine with -F 0 for the heap alone");
    // A flag with an optional value, like --trace=timed: the program follows after --, so a
    // bare --heap-sample never takes the next word.
    cmd.add_flag("--heap-sample{524288}", heap_sample,
                 "the heap, sampled: one allocation per BYTES allocated on average (default "
                 "512 KiB; --heap-sample=BYTES), weighted into unbiased estimates; frees of "
                 "sampled blocks matched")
        ->disable_flag_override(false)
        ->check(CLI::Range(uint64_t(1), uint64_t(1) << 40));
    cmd.add_option("--heap-seed", heap_seed,
                   "--heap-sample: seed of the random choices, for repeatable runs (default: a "
                   "new one each run)")
        ->check(CLI::Range(uint64_t(1), ~uint64_t(0)));
    cmd.add_flag("--counts-only", counts_only,
                 "no sampling: exact counts only (--coverage, -finstrument-functions builds); "
                 "hotline annotate then weighs lines by their instructions");
    cmd.add_flag("--perl-sample", perl_sample,
                 "a perl program: sample its Perl stack -F times a second of CPU time instead of "
                 "measuring every statement (no counts; near-zero overhead)");
    cmd.add_flag("-q,--quiet", quiet, "no summary line after the run");
    cmd.add_flag("-g", perf_g, "accepted for perf's sake: hotline always records whole stacks");
    cmd.add_option("-p,--pid", pid,
                   "profile a running process (all its threads) instead of starting a program, "
                   "until Ctrl-C, --duration or its end; it runs on untouched")
        ->check(Positive());
    cmd.add_option("--duration", duration, "with -p: stop after this many seconds")
        ->check(Positive());
    cmd.add_option("--watch", watch,
                   "watch global or static variables (NAME or FILE:NAME, comma-separated): "
                   "every write with its value and line, on a hardware watchpoint each (4 at most)")
        ->delimiter(',');
    cmd.add_flag("--watch-reads", watch_reads,
                 "with --watch: count reads too (a second watchpoint per variable)");
  }
};

// The exit status of `hotline record` when a profile could not be written (a full disk), whatever
// the program's: as env and nice say that they failed themselves.
inline constexpr int kProfileLostExitCode = 125;

// Runs `command` under the options and writes its profile; returns the program's exit status
// (128+N when signal N killed it), kProfileLostExitCode, or hotline's own error code (1, 2, 126,
// 127) with the message printed. The program's stdin, stdout and stderr are its own.
int RunRecord(const RecordOptions& o, const std::vector<std::string>& command);

}  // namespace hotline::cli

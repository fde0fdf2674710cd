// `hotline sweep --sizes N1,N2,... [--repeat K] -- PROGRAM ARGS...`: records the program once
// per size (K times each), `{n}` in its arguments replaced by the size and the size in
// HOTLINE_SIZE, each run into DIR/n<size>.r<k>.hotline with its size appended as a SIZE record
// (docs/complexity.md). `hotline report -X DIR` then fits each function's time against n.
#include <fcntl.h>
#include <fmt/core.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "cli/commands.h"
#include "record/program.h"
#include "cli/record_command.h"
#include "format/writer.h"

namespace hotline::cli {
namespace {

struct SweepOptions {
  std::vector<uint64_t> sizes;
  unsigned repeat = 1;
  std::string output;  // the directory; default PROGRAM.sweep
  std::string trace = "auto";
  unsigned freq = 1000;
  std::string clock = "cpu";
  bool keep_going = false;
  std::vector<std::string> command;  // set by TakeSweepProgram

  void Register(CLI::App& cmd) {
    cmd.add_option("--sizes", sizes, "the input sizes, comma-separated (at least 5 for a fit)")
        ->required()
        ->delimiter(',')
        ->check(Positive());
    cmd.add_option("--repeat", repeat, "runs per size (default 1); the fit takes their median")
        ->check(CLI::Range(1u, 1000u));
    cmd.add_option("-o,--output", output,
                   "the directory for the runs' profiles (default: PROGRAM.sweep here)");
    cmd.add_option("--trace", trace,
                   "as for hotline record: timed gives exact elapsed times per function")
        ->check(CLI::IsMember({"auto", "counts", "timed", "none"}));
    cmd.add_option("-F,--freq", freq, "samples per second of CPU time per thread")
        ->check(CLI::Range(1u, 100000u));
    cmd.add_option("--clock", clock, "cpu or wall, as for hotline record")
        ->check(CLI::IsMember({"cpu", "wall"}));
    cmd.add_flag("--keep-going", keep_going,
                 "go on after a run that fails (by default the sweep stops there)");
  }
};

std::shared_ptr<SweepOptions> g_sweep_options;

std::string Replace(std::string text, const std::string& what, const std::string& with) {
  for (size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += with.size())
    text.replace(at, what.size(), with);
  return text;
}

// Appends the run's size to its profile: a SIZE record without a call.
bool AppendRunSize(const std::string& path, uint64_t n) {
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return false;
  format::Writer writer;
  writer.beginAppend(fd);
  writer.add(format::SizeRecord{ClockNs(CLOCK_MONOTONIC), 0, 0, 0, n});
  bool ok = writer.flush();
  return close(fd) == 0 && ok;
}

int RunSweep(const SweepOptions& o) {
  if (o.command.empty()) {
    fmt::print(stderr,
               "hotline: sweep: no program given (hotline sweep --sizes N,N,... -- PROGRAM "
               "ARGS, {{n}} in ARGS standing for the size)\n");
    return 2;
  }
  // A program that cannot run is said once, before any directory is made.
  int exit_code = 0;
  if (auto program = record::InspectProgram(o.command[0], &exit_code); !program) {
    fmt::print(stderr, "hotline: sweep: {}\n", program.status().message());
    return exit_code;
  }
  std::string dir = o.output.empty()
                        ? std::filesystem::path(o.command[0]).filename().string() + ".sweep"
                        : o.output;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    fmt::print(stderr, "hotline: sweep: cannot create the directory {}: {}\n", dir,
               ec ? ec.message() : "a file of that name is in the way");
    return 1;
  }
  // A former sweep's runs would be fitted with this one's.
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.starts_with("n") && name.ends_with(".hotline")) std::filesystem::remove(entry, ec);
  }
  RecordOptions record;
  record.trace = o.trace;
  record.freq = o.freq;
  record.clock = o.clock;
  record.quiet = true;
  size_t runs = 0, failed = 0;
  const size_t total = o.sizes.size() * o.repeat;
  // Repeats go round the sizes, so that a slow spell of the machine spreads over all of them.
  for (unsigned k = 1; k <= o.repeat; ++k)
    for (uint64_t n : o.sizes) {
      std::string size = std::to_string(n);
      // Progress, a line a run: a sweep of large sizes runs for minutes.
      fmt::print(stderr, "hotline: sweep: run {}/{}: n={}{}\n", runs + 1, total, n,
                 o.repeat > 1 ? fmt::format(" (round {})", k) : "");
      std::vector<std::string> command;
      for (const std::string& arg : o.command) command.push_back(Replace(arg, "{n}", size));
      record.output = fmt::format("{}/n{}.r{}.hotline", dir, n, k);
      setenv("HOTLINE_SIZE", size.c_str(), 1);
      int status = RunRecord(record, command);
      unsetenv("HOTLINE_SIZE");
      if (!std::filesystem::exists(record.output)) {
        fmt::print(stderr, "hotline: sweep: n={}: no profile was written\n", n);
        return status ? status : 1;
      }
      if (!AppendRunSize(record.output, n)) {
        fmt::print(stderr, "hotline: sweep: {}: cannot append the size\n", record.output);
        return 1;
      }
      ++runs;
      if (status != 0) {
        ++failed;
        fmt::print(stderr, "hotline: sweep: n={}: {} exited with status {}\n", n, command[0],
                   status);
        if (!o.keep_going) return status;
      }
    }
  fmt::print(stderr, "hotline: sweep: {} runs ({} sizes × {}) in {}{}; hotline report -X {}\n",
             runs, o.sizes.size(), o.repeat, dir, failed ? fmt::format(", {} failed", failed) : "",
             dir);
  return 0;
}

}  // namespace

void RegisterSweepCommand(CLI::App& app, int* exit_code) {
  g_sweep_options = std::make_shared<SweepOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "record a program once per input size, for hotline report -X: hotline sweep --sizes "
      "N,N,... [--repeat K] -- PROGRAM ARGS ({n} in ARGS is the size)");
  g_sweep_options->Register(*cmd);
  cmd->footer(
      "Everything after -- is the program's command line; {n} in it is replaced by the size, "
      "which is also in the environment as HOTLINE_SIZE.");
  auto options = g_sweep_options;
  cmd->callback([options, exit_code] { *exit_code = RunSweep(*options); });
}

int TakeSweepProgram(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) != "sweep" || !g_sweep_options) return argc;
  return TakeAfterSeparator(argc, argv, g_sweep_options->command);
}

}  // namespace hotline::cli

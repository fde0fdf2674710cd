// The summary: printed last, unless -N or -m.
#include <fmt/format.h>
#include <string.h>

#include "report/report.h"
#include "report/text.h"

namespace hotline::report {

std::string DescribeEnding(const model::Profile& p) {
  const std::optional<format::EndRecord>& end = p.summary.end;
  if (!end) {
    return fmt::format(
        "no END record: the run ended before hotline could finish the profile (a program "
        "sampling itself killed by SIGKILL, or hotline record itself killed); samples after {} "
        "may be missing",
        p.summary.last_time >= p.summary.start_time && p.summary.start_time
            ? FormatTime(p.summary.last_time - p.summary.start_time, false) + " into the run"
            : "the last one");
  }
  switch (end->how) {
    case format::EndHow::kExit:
      return fmt::format("exit code {}", end->code);
    case format::EndHow::kUnderscoreExit:
      return fmt::format("_exit({})", end->code);
    case format::EndHow::kSignal: {
      const char* name = end->code < 65 ? sigabbrev_np(static_cast<int>(end->code)) : nullptr;
      return name ? fmt::format("killed by SIG{}", name)
                  : fmt::format("killed by signal {}", end->code);
    }
    case format::EndHow::kExec:
      return "replaced by another program (exec)";
    case format::EndHow::kUnload:
      return "the runtime was unloaded";
    case format::EndHow::kDetached:
      return "still running when hotline detached";
    case format::EndHow::kEnded:
      return "ended (its exit status went to its parent, not to hotline)";
  }
  return "unknown";
}

std::string SamplerName(format::Sampler sampler) {
  switch (sampler) {
    case format::Sampler::kNone:
      return "none";
    case format::Sampler::kPerfTaskClock:
      return "in the program: perf task-clock signals";
    case format::Sampler::kPosixCpuTimer:
      return "in the program: POSIX CPU-time timers";
    case format::Sampler::kPosixMonotonicTimer:
      return "in the program: POSIX monotonic timers";
    case format::Sampler::kKernelRecorder:
      return "kernel (perf_event rings read by hotline record)";
  }
  return "unknown";
}

void PrintSummary(const model::Profile& p, const ReportOptions& options, std::string& out) {
  if (options.machine || options.no_summary) return;
  const model::Summary& s = p.summary;
  TableWriter w(p, options, out);
  w.title("summary", "Summary");
  auto row = [&](std::string_view key, const std::string& value) { w.row({key, value}); };
  auto countWithShare = [&](uint64_t n) {
    return s.samples
               ? fmt::format(
                     "{} ({}%)", n,
                     FormatPercent(100.0 * static_cast<double>(n) / static_cast<double>(s.samples)))
               : fmt::format("{}", n);
  };
  if (!options.profile_path.empty()) row("profile", options.profile_path);
  if (!s.exe.empty()) row("program", s.exe);
  row("ended", DescribeEnding(p));
  if (s.sampler != format::Sampler::kNone) row("sampler", SamplerName(s.sampler));
  for (const std::string& note : p.notes) row("note", note);
  if (s.samples_switched_off)
    row("samples while switched off", fmt::format("{} (not counted)", s.samples_switched_off));
  row("total time", FormatTime(s.total_ns, false));
  if (s.cpu_compared) {
    row("CPU time of the threads",
        FormatTime(s.cpu_ns, false) +
            (s.threads_cpu_unknown ? fmt::format(" ({} thread{} unknown)", s.threads_cpu_unknown,
                                                 s.threads_cpu_unknown == 1 ? "" : "s")
                                   : ""));
    row("sampled", FormatTime(s.sampled_ns, false));
    row("not sampled ([unsampled])",
        fmt::format("{} ({}%)", FormatTime(s.unsampled_ns, false),
                    FormatPercent(s.cpu_ns ? 100.0 * static_cast<double>(s.unsampled_ns) /
                                                 static_cast<double>(s.cpu_ns)
                                           : 0.0)));
  }
  // A front-end that measured every command slot or statement has no samples: its records are
  // batches of them. Its units are the slots TeX's main loop ran (-C's) or the statements run.
  bool measured = s.interpreted && s.sampler == format::Sampler::kNone;
  if (measured) {
    uint64_t units = 0;
    for (const model::TexCommand& c : p.tex_commands) units += c.slots;
    bool tex = !p.tex_commands.empty();
    if (!tex)
      for (const model::Line& l : p.lines) units += l.count_exact ? l.count : 0;
    row(tex ? "command slots" : "statements", fmt::format("{}", units));
    row(tex ? "average per slot" : "average per statement",
        FormatTime(units ? s.total_ns / units : 0, false));
  } else {
    row("samples", fmt::format("{}", s.samples));
    row("average per sample", FormatTime(s.samples ? s.sampled_ns / s.samples : 0, false));
  }
  row("files", fmt::format("{}", s.files));
  row("functions", fmt::format("{}", s.functions));
  row("threads", fmt::format("{}", p.threads.size()));
  row("maximum stack depth", fmt::format("{}", s.max_depth));
  if (s.interpreted) {  // the front-end counted them (Devel::Hotline, the profiling pdfTeX)
    bool tex = !p.tex_commands.empty();
    row("line counts", !s.exact_line_counts ? "estimated from samples"
                       : tex                ? "exact (command slots, counted by the engine)"
                                            : "exact (statements, counted by the interpreter)");
    row("calls", !s.traced ? "estimated from samples"
                 : tex     ? "exact (counted by the engine)"
                           : "exact (counted by the interpreter)");
  } else {
    row("line counts", s.exact_line_counts ? "exact (gcov)" : "estimated from samples");
    row("calls", s.traced              ? "exact (-finstrument-functions)"
                 : s.exact_line_counts ? "exact for functions gcov counted"
                                       : "estimated from samples");
  }
  if (s.traced && s.max_call_depth > 0)
    row("maximum call depth", fmt::format("{}", s.max_call_depth));
  if (!measured) {
    row("broken stacks", countWithShare(s.broken_samples));
    row("truncated stacks", countWithShare(s.truncated_samples));
    row("samples in the profiler", countWithShare(s.profiler_samples));
    row("samples outside any module", countWithShare(s.unknown_samples));
  }
  if (!p.marks.empty()) row("marks", fmt::format("{}", p.marks.size()));
  for (const std::string& reason : p.disabled_reasons) row("runtime switched off", reason);
}

}  // namespace hotline::report

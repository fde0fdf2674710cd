// `hotline report [flags] [FILE]`: texprofile's tables (docs/report.md). Reads the profile,
// symbolizes it, builds the model and prints the tables the flags ask for.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "analysis/complexity.h"
#include "cli/commands.h"
#include "cli/count_costs.h"
#include "cli/load_profile.h"
#include "cli/profile_path.h"
#include "cli/terminal.h"
#include "format/raw_profile.h"
#include "format/reader.h"
#include "model/build.h"
#include "model/heap.h"
#include "model/merge.h"
#include "model/watch.h"
#include "report/complexity.h"
#include "report/heap.h"
#include "report/report.h"
#include "report/watch.h"
#include "symbolize/symbolizer.h"

namespace hotline::cli {

namespace {

// Everything `hotline report` accepts, declared once: Register() derives parsing and --help.
struct ReportCommandOptions {
  std::vector<std::string> files;
  std::string file;  // the one profile read, or the first of several
  report::ReportOptions report;
  bool all = false;
  bool threads = false;
  bool heap = false;
  bool watch = false;
  bool complexity = false;  // -X, or the `complexity` command
  bool points = false;      // -X --points
  model::HeapOptions heap_options;
  model::MergeOptions merge;
  double cutoff = 0;
  CLI::Option* cutoff_option = nullptr;
  CLI::Option* top_count_option = nullptr;
  std::string color = "auto";
  uint32_t width = 0;
  CLI::Option* width_option = nullptr;

  void Register(CLI::App& cmd) {
    cmd.add_flag("-T,--top", report.top, "top lines by time (how many: -t N)");
    top_count_option = cmd.add_option("-t,--top-count", report.top_count,
                                      "how many top lines to show (default 10; implies -T)")
                           ->check(Positive());
    cmd.add_flag("-G,--graph", report.graph,
                 "call graph: one section per function, with self and child rows (time/loop)");
    cmd.add_flag("-F,--files", report.files, "files by time");
    cmd.add_flag("-L,--lines", report.lines, "lines by time, grouped by file");
    cmd.add_flag("-C,--flat", report.flat, "flat table of functions by self time");
    cmd.add_flag("-M,--functions", report.functions,
                 "functions by definition site with calls, self and cumulative time");
    cmd.add_flag("-P,--procedures", report.procedures,
                 "SOKRAT's procedure table: calls, total, self, average, min, max, self %, "
                 "a bar diagram and the maximum call depth");
    cmd.add_flag("--sampled-times", report.sampled_times,
                 "-P: the samples' times (CPU time, or --clock wall's elapsed time) even when the "
                 "program was traced with --trace=timed, whose per-call times are elapsed time");
    cmd.add_flag("-R,--raw", report.raw, "raw samples: thread, time, depth, innermost function");
    cmd.add_flag("-s,--stack-changes", report.stack_changes,
                 "with the raw samples, the stack pushes and pops before each (implies -R)");
    cmd.add_flag("-i,--definitions", report.definitions,
                 "append [file:line] of the definition to every function name");
    cutoff_option = cmd.add_option("-p,--cutoff", cutoff,
                                   "leave out rows below this percent of the total "
                                   "(default 1 for -F -L -G, 0 for the other tables)")
                        ->check(CLI::Range(0.0, 100.0));
    cmd.add_flag("-m,--machine", report.machine,
                 "machine readable: no titles or headers, integer ns, n/m as two columns, "
                 "no summary");
    cmd.add_flag("-N,--no-summary", report.no_summary, "no summary");
    AddColorOption(cmd, color);
    cmd.add_flag("--full-names", report.full_names,
                 "C++ names whole (default: parameter lists only where overloads need them, "
                 "template arguments as <…>)");
    width_option = cmd.add_option("--width", width,
                                  "cut rows to N characters, names ending in … (default: the "
                                  "terminal's width; 0 or not a terminal: never)");
    cmd.add_flag("-A,--all", all, "the usual set: -T -G -F -C and the summary");
    cmd.add_flag("--threads", threads, "the chosen tables once per thread");
    cmd.add_flag("-H,--heap", heap,
                 "the heap: peak, totals, temporary allocations, leaks, top sites, sizes "
                 "(a profile recorded with --heap)");
    cmd.add_flag("-W,--watch", watch,
                 "watched variables: writes, reads, range of values, most frequent values and "
                 "the lines that wrote them (a profile recorded with --watch or hotline_watch)");
    cmd.add_flag("-X,--complexity", complexity,
                 "complexity: per function, how time grows with the input size n (calls tagged "
                 "by hotline_size(), or the runs of hotline sweep; FILE may be a sweep's "
                 "directory): the model, its coefficients and error, or undecided");
    cmd.add_flag("--points", points, "-X: also the points, the median time at each size");
    cmd.add_flag("--allocator-frames", heap_options.allocator_frames,
                 "-H: sites at the allocator's caller as recorded (std::allocator, libraries), "
                 "not at the program's own line");
    cmd.add_flag("--force", merge.force, "with several FILEs: add up runs of different programs");
    cmd.add_option("FILE", files,
                   "the profile (default: the newest *.hotline here); several are runs of one "
                   "program, added up");
  }
};

// Several runs read as one (report A B ...).
Expected<model::Profile> LoadRuns(const std::vector<std::string>& paths,
                                  model::AddressResolver& resolver,
                                  const model::BuildOptions& build,
                                  const model::MergeOptions& merge) {
  Expected<std::vector<model::Profile>> runs = LoadEach(paths, resolver, build);
  if (!runs) return runs.status();
  std::vector<const model::Profile*> pointers;
  for (const model::Profile& run : *runs) pointers.push_back(&run);
  Expected<model::Profile> merged = model::MergeProfiles(pointers, merge);
  if (!merged)
    return Status::Error(fmt::format("{}: {}", fmt::join(paths, ", "), merged.status().message()));
  return merged;
}

// -X: every run on its own (a run's size is its own), then the fits across them.
int RunComplexity(ReportCommandOptions& o) {
  const report::ReportOptions& r = o.report;
  if (r.top || r.graph || r.files || r.lines || r.flat || r.functions || r.procedures || r.raw ||
      r.stack_changes || o.heap || o.threads || o.all) {
    fmt::print(stderr,
               "hotline: report: -X prints alone: it fits the runs one by one, where the other "
               "tables add them up\n");
    return 2;
  }
  symbolize::Symbolizer symbolizer;
  model::SymbolizerResolver resolver(symbolizer);
  Expected<std::vector<model::Profile>> runs = LoadEach(o.files, resolver, {});
  if (!runs) {
    fmt::print(stderr, "hotline: {}\n", runs.status().message());
    return 1;
  }
  std::vector<const model::Profile*> pointers;
  uint64_t unattached = 0;
  for (const model::Profile& p : *runs) {
    pointers.push_back(&p);
    for (const auto& [key, value] : p.runtime_stats)
      if (key == "sizes_without_timed_call") unattached += value;
  }
  if (unattached)
    Warn(
        fmt::format("{} hotline_size() calls found no timed call to tag: build with "
                    "-finstrument-functions and record with --trace=timed",
                    unattached));
  std::vector<analysis::FunctionComplexity> fits =
      analysis::FitProfiles(pointers, o.cutoff_option->count() > 0 ? o.cutoff : 1.0);
  if (fits.empty()) {
    fmt::print(stderr,
               "hotline: report: -X: {} no sizes: calls tagged by hotline_size() (a "
               "-finstrument-functions build recorded with --trace=timed) or the runs of "
               "hotline sweep\n",
               o.files.size() == 1   ? o.files.front() + " holds"
               : o.files.size() <= 3 ? fmt::format("{} hold", fmt::join(o.files, ", "))
                                     : fmt::format("the {} profiles ({}, ...) hold", o.files.size(),
                                                   o.files.front()));
    return 1;
  }
  std::string out;
  report::ReportOptions table = o.report;
  table.name_tables = table.machine && o.points;
  report::PrintComplexity(fits, table, out);
  if (o.points) report::PrintComplexityPoints(fits, table, out);
  fmt::print("{}", out);
  return 0;
}

int RunReport(ReportCommandOptions& o) {
  report::ReportOptions& asked = o.report;
  if (o.all) asked.selectAll();
  if (o.cutoff_option->count() > 0) asked.cutoff = o.cutoff;
  if (o.top_count_option->count() > 0) asked.top = true;
  asked.color = !asked.machine && UseColor(o.color);
  if (!asked.machine) asked.width = o.width_option->count() > 0 ? o.width : TerminalWidth();
  // No table asked for: the top lines, the 20 functions with the most self time (as perf's and
  // pprof's top do; a line says how many more, and -C shows them) and the summary.
  bool defaulted =
      !(asked.top || asked.graph || asked.files || asked.lines || asked.flat || asked.functions ||
        asked.procedures || asked.raw || asked.stack_changes || o.heap || o.watch || o.complexity);
  if (defaulted) {
    asked.top = asked.flat = true;
    if (!asked.machine && o.cutoff_option->count() == 0) asked.flat_limit = 20;
  }
  bool named = !o.files.empty();
  if (Status resolved = ResolveProfileArguments(o.files, /*folders=*/o.complexity);
      !resolved.ok()) {
    fmt::print(stderr, "hotline: {}\n", resolved.message());
    return 1;
  }
  if (o.complexity) o.files = ExpandDirectories(o.files);
  o.file = o.files.front();
  if (!named) fmt::print(stderr, "hotline: reading {} (the newest profile here)\n", o.file);
  asked.profile_path = o.files.size() == 1
                           ? o.file
                           : fmt::format("{} ({} runs)", fmt::join(o.files, ", "), o.files.size());
  if (o.complexity) return RunComplexity(o);
  if (o.files.size() > 1 && (o.threads || o.heap || o.watch)) {
    fmt::print(stderr, "hotline: report: {} reads one profile at a time\n",
               o.heap    ? "-H"
               : o.watch ? "-W"
                         : "--threads");
    return 2;
  }

  symbolize::Symbolizer symbolizer;
  model::SymbolizerResolver resolver(symbolizer);
  format::ReadStats stats;
  model::BuildOptions build;
  build.keep_samples = o.report.raw || o.report.stack_changes;
  // --threads builds several profiles from one reading, and -W reads the watches from the
  // records, so they keep them (all but the heap's); otherwise samples are aggregated as they
  // are read. The heap is built as its records are read, and so, in the same reading, is the
  // time profile when no other reading is needed.
  bool keep_records = o.threads || o.watch;
  std::optional<model::HeapLoad> heap_load;
  if (o.heap) {
    Expected<model::HeapLoad> loaded = model::LoadHeapProfile(
        o.file, resolver, o.heap_options, keep_records ? std::nullopt : std::optional(build));
    if (!loaded) {
      fmt::print(stderr, "hotline: {}\n", loaded.status().message());
      return 1;
    }
    heap_load = std::move(*loaded);
    stats = heap_load->stats;
  }
  std::optional<format::RawProfile> raw;
  if (keep_records) {
    Expected<format::RawProfile> loaded = format::LoadRawProfile(o.file, &stats, false);
    if (!loaded) {
      fmt::print(stderr, "hotline: {}\n", loaded.status().message());
      return 1;
    }
    raw = std::move(*loaded);
  }
  if (o.threads || o.heap || o.watch) {
    if (stats.next_run) {
      fmt::print(stderr,
                 "hotline: report: {} holds several runs (hotline merge); {} reads one run: "
                 "give the runs' own files\n",
                 o.file,
                 o.heap    ? "-H"
                 : o.watch ? "-W"
                           : "--threads");
      return 2;
    }
  }
  Expected<model::Profile> profile = raw         ? model::BuildProfile(*raw, resolver, build)
                                     : heap_load ? std::move(*heap_load->profile)
                                     : o.files.size() > 1
                                         ? LoadRuns(o.files, resolver, build, o.merge)
                                         : LoadOne(o.file, resolver, build);
  if (!profile) {
    fmt::print(stderr, "hotline: {}\n", profile.status().message());
    return 1;
  }
  if (raw || heap_load) WarnAboutFile(o.file, stats, *profile);
  for (const std::string& w : profile->warnings) Warn(w);
  // A counts-only profile (no sampler ran): its exact counts and costs are what it has, so the
  // report without table flags is SOKRAT's procedures with their instructions.
  bool counts_only =
      profile->summary.sampler == format::Sampler::kNone && profile->summary.exact_line_counts;
  if (defaulted && counts_only) {
    o.report.top = o.report.flat = false;
    o.report.procedures = true;
  }
  const report::ReportOptions& r = o.report;
  bool sample_tables = r.top || r.graph || r.files || r.lines || r.flat || r.functions ||
                       r.procedures || r.raw || r.stack_changes || !(o.heap || o.watch);
  if (profile->summary.samples == 0 && sample_tables && !counts_only)
    Warn(o.files.size() == 1
             ? fmt::format("{}: the profile holds no samples", o.file)
             : fmt::format("{}: the profiles hold no samples", fmt::join(o.files, ", ")));

  std::string out;
  if (o.watch) {
    Expected<model::WatchProfile> watches = model::BuildWatchProfile(*raw, resolver);
    if (!watches) {
      fmt::print(stderr, "hotline: {}: {}\n", o.file, watches.status().message());
      return 1;
    }
    if (sample_tables) report::PrintReport(*profile, o.report, out);
    if (o.heap) {
      const Expected<model::HeapProfile>& heap = heap_load->heap;
      if (!heap) {
        fmt::print(stderr, "hotline: {}: {}\n", o.file, heap.status().message());
        return 1;
      }
      report::PrintHeap(heap.value(), o.report, out);
    }
    report::PrintWatches(*watches, o.report, out);
    fmt::print("{}", out);
    return 0;
  }
  if (o.heap) {
    const Expected<model::HeapProfile>& heap = heap_load->heap;
    if (!heap) {
      fmt::print(stderr, "hotline: {}: {}\n", o.file, heap.status().message());
      return 1;
    }
    if (sample_tables) report::PrintReport(*profile, o.report, out);
    report::PrintHeap(heap.value(), o.report, out);
    fmt::print("{}", out);
    return 0;
  }
  // -P of a counts-only profile: SOKRAT's costs, the instructions each procedure executed.
  std::optional<CountCosts> costs;
  if (o.report.procedures && profile->summary.exact_line_counts && profile->summary.samples == 0 &&
      o.files.size() <= 1) {
    Expected<CountCosts> counted = CostsOfCounts(o.file, *profile);
    if (counted.ok()) {
      costs = std::move(*counted);
      o.report.costs = &costs->model;
    } else {
      fmt::print(stderr, "hotline: note: no costs from counts: {}\n", counted.status().message());
    }
  }
  if (!o.threads) {
    report::PrintReport(*profile, o.report, out);
    fmt::print("{}", out);
    return 0;
  }
  bool first = true;
  for (const model::Thread& t : profile->threads) {
    if (t.samples == 0) continue;
    if (!first && !o.report.machine) fmt::print("\n");
    first = false;
    model::BuildOptions one = build;
    one.thread = t.tid;
    Expected<model::Profile> thread_profile = model::BuildProfile(*raw, resolver, one);
    if (!thread_profile) {
      fmt::print(stderr, "hotline: {}\n", thread_profile.status().message());
      return 1;
    }
    report::PrintReport(*thread_profile, o.report, out);
    fmt::print("{}", out);
    out.clear();
  }
  return 0;
}

}  // namespace

void RegisterReportCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<ReportCommandOptions>();
  CLI::App* cmd = app.add_subcommand("report", "print texprofile's tables for a profile");
  options->Register(*cmd);
  cmd->callback([options, exit_code] { *exit_code = RunReport(*options); });

  // `hotline complexity [FILE...]`: report -X.
  auto fit = std::make_shared<ReportCommandOptions>();
  CLI::App* alias = app.add_subcommand(
      "complexity", "how each function's time grows with the input size: hotline report -X");
  fit->Register(*alias);
  alias->callback([fit, exit_code] {
    fit->complexity = true;
    *exit_code = RunReport(*fit);
  });
}

}  // namespace hotline::cli

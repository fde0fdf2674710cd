// `hotline export --format F [FILE] -o OUT`: the profile in another tool's format
// (docs/export.md). Loads the profile as report does, hands it to the exporter of F, and writes
// OUT atomically: on any error OUT is left as it was and no partial file remains.
#include <fmt/core.h>

#include <functional>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/load_profile.h"
#include "cli/profile_path.h"
#include "export/export.h"
#include "format/raw_profile.h"
#include "format/reader.h"
#include "model/build.h"
#include "model/heap.h"
#include "symbolize/symbolizer.h"

namespace hotline::cli {
namespace {

struct ExportCommandOptions {
  std::string format;
  std::string file;
  std::string out;
  bool heap = false;
  std::string unit;
  exporter::ExportOptions exporter;

  void Register(CLI::App& cmd) {
    cmd.add_option("-f,--format", format, "the format: " + exporter::KnownFormatNames())
        ->required();
    cmd.add_option("-o,--output", out, "the file to write")->required();
    cmd.add_flag("--heap", heap,
                 "pprof: the heap (alloc_objects, alloc_space, inuse_objects, inuse_space) "
                 "instead of the time (a profile recorded with --heap)");
    cmd.add_flag("--lines", exporter.lines, "folded: the innermost frame with its file and line");
    cmd.add_flag("--threads", exporter.per_thread, "folded: each stack under its thread");
    cmd.add_option("--unit", unit,
                   "folded: what each stack's number counts, samples (the default, as "
                   "flamegraph.pl expects) or ns (a TeX or Perl profile's default: it measured "
                   "time rather than sampled it)")
        ->check(CLI::IsMember({"samples", "ns"}));
    cmd.add_option("FILE", file, "the profile (default: the newest *.hotline here)");
  }
};

int Fail(const std::string& message) {
  fmt::print(stderr, "hotline: export: {}\n", message);
  return 1;
}

void WarnAboutDamage(const std::string& file, const format::ReadStats& stats,
                     const model::Profile& profile) {
  if (stats.damaged())
    Warn(fmt::format("{}: damaged, exporting what could be read: {}", file, stats.summary()));
  for (const std::string& problem : stats.problems) Warn(fmt::format("{}: {}", file, problem));
  for (const std::string& w : profile.warnings) Warn(w);
}

Expected<std::string> Encode(exporter::Format format, const ExportCommandOptions& o,
                             const model::Profile& profile, const model::HeapProfile* heap,
                             const format::RawProfile* raw) {
  switch (format) {
    case exporter::Format::kFolded:
      return exporter::ExportFolded(profile, o.exporter);
    case exporter::Format::kCallgrind:
      // A counts-only profile of a --coverage build: the instructions it executed, as callgrind.
      if (raw && profile.summary.sampler == format::Sampler::kNone &&
          !raw->line_instructions.empty())
        return exporter::ExportCallgrindInstructions(profile, *raw);
      return exporter::ExportCallgrind(profile);
    case exporter::Format::kPprof:
      return heap ? exporter::ExportHeapPprof(profile, *heap) : exporter::ExportPprof(profile);
    case exporter::Format::kJson:
      return exporter::ExportJson(profile, heap);
    case exporter::Format::kChrome:
      return exporter::ExportChrome(profile);
    case exporter::Format::kSpeedscope:
      return exporter::ExportSpeedscope(profile);
  }
  return Status::Error("unknown format");  // every enumerator returned above
}

int RunExport(ExportCommandOptions& o) {
  std::optional<exporter::Format> format = exporter::FormatNamed(o.format);
  if (!format)
    return Fail(
        fmt::format("unknown format '{}' (known: {})", o.format, exporter::KnownFormatNames()));
  // An option another format would ignore is a mistake worth saying.
  if (o.heap && *format != exporter::Format::kPprof)
    return Fail(fmt::format("--heap is for --format pprof, not {}", o.format));
  if ((o.exporter.lines || o.exporter.per_thread || !o.unit.empty()) &&
      *format != exporter::Format::kFolded)
    return Fail(fmt::format("--{} is for --format folded, not {}",
                            o.exporter.lines        ? "lines"
                            : o.exporter.per_thread ? "threads"
                                                    : "unit",
                            o.format));
  if (o.unit == "samples") o.exporter.unit = exporter::FoldedUnit::kSamples;
  if (o.unit == "ns") o.exporter.unit = exporter::FoldedUnit::kNs;
  bool named = !o.file.empty();
  Expected<std::string> file = ProfileArgument(o.file);
  if (!file) return Fail(file.status().message());
  if (!named) fmt::print(stderr, "hotline: reading {} (the newest profile here)\n", *file);

  symbolize::Symbolizer symbolizer;
  model::SymbolizerResolver resolver(symbolizer);
  format::ReadStats stats;
  model::BuildOptions build;
  build.keep_samples = build.keep_calls =
      *format == exporter::Format::kChrome || *format == exporter::Format::kSpeedscope;
  // With the heap, the time profile is the first run's, built from its records (all but the
  // heap's, which the heap is built from as they are read). JSON carries the heap summary
  // whenever the profile has allocations.
  bool json = *format == exporter::Format::kJson;
  bool callgrind = *format == exporter::Format::kCallgrind;
  std::optional<format::RawProfile> raw;
  if (o.heap || json || callgrind) {
    Expected<format::RawProfile> loaded = format::LoadRawProfile(*file, &stats, false);
    if (!loaded) return Fail(loaded.status().message());
    raw = std::move(*loaded);
  }
  Expected<model::Profile> profile = raw ? model::BuildProfile(*raw, resolver, build)
                                         : model::LoadProfile(*file, resolver, build, &stats);
  if (!profile) return Fail(profile.status().message());
  WarnAboutDamage(*file, stats, *profile);
  std::optional<model::HeapProfile> heap;
  if (o.heap || json) {
    Expected<model::HeapLoad> loaded = model::LoadHeapProfile(*file, resolver);
    if (!loaded) return Fail(loaded.status().message());
    Expected<model::HeapProfile>& built = loaded->heap;
    if (o.heap && !built) return Fail(fmt::format("{}: {}", *file, built.status().message()));
    if (built && (o.heap || built->alloc_calls + built->mmap_calls > 0)) heap = std::move(*built);
  }
  if (*format == exporter::Format::kChrome) {
    // Written as it is made: a large profile's trace never sits whole in memory.
    Status written = exporter::WriteFileAtomically(
        o.out, [&](const std::function<void(std::string_view)>& out) -> Status {
          Status made = exporter::WriteChrome(*profile, out);
          if (!made.ok()) return Status::Error(fmt::format("{}: {}", *file, made.message()));
          return made;
        });
    return written.ok() ? 0 : Fail(written.message());
  }
  Expected<std::string> bytes =
      Encode(*format, o, *profile, heap ? &*heap : nullptr, raw ? &*raw : nullptr);
  if (!bytes) return Fail(fmt::format("{}: {}", *file, bytes.status().message()));
  Status written = exporter::WriteFileAtomically(o.out, *bytes);
  if (!written.ok()) return Fail(written.message());
  return 0;
}

}  // namespace

void RegisterExportCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<ExportCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "export", "write the profile for another tool: " + exporter::KnownFormatNames());
  options->Register(*cmd);
  cmd->callback([options, exit_code] { *exit_code = RunExport(*options); });
}

}  // namespace hotline::cli

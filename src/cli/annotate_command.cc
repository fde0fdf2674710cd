// `hotline annotate [FILE] [SOURCE...]`: the annotated listing (docs/annotate.md).
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/count_costs.h"
#include "cli/profile_path.h"
#include "cli/terminal.h"
#include "format/raw_profile.h"
#include "model/build.h"
#include "report/annotate.h"
#include "report/sources.h"
#include "symbolize/symbolizer.h"

namespace hotline::cli {
namespace {

struct AnnotateCommandOptions {
  std::vector<std::string> arguments;  // [FILE] [SOURCE...]
  report::AnnotateOptions annotate;
  bool no_color = false;
  std::string color = "auto";

  void Register(CLI::App& cmd) {
    cmd.add_option("-p,--cutoff", annotate.cutoff,
                   "functions listed and in the index cost at least this percent (default 2)")
        ->check(CLI::Range(0.0, 100.0));
    cmd.add_flag("-a,--all", annotate.all,
                 "whole files, nothing folded (default: the functions above the cutoff, hot "
                 "lines with two lines of context)");
    cmd.add_flag("--system", annotate.system,
                 "system headers and libraries' sources too (default: the program's own files, "
                 "and those named as SOURCE)");
    cmd.add_flag("--full-names", annotate.full_names,
                 "C++ names whole, with parameters and template arguments");
    cmd.add_option("--source-dir", annotate.source_dirs,
                   "another directory to look for sources in (repeatable)")
        ->allow_extra_args(false);  // one directory per --source-dir: what follows is FILE
    AddColorOption(cmd, color);
    cmd.add_flag("--no-color", no_color, "same as --color=never");
    cmd.add_flag("-m,--machine", annotate.machine,
                 "one row per executable line: file, line, count (empty when unknown), time_ns");
    cmd.add_option("FILE SOURCE", arguments,
                   "the profile (default: the newest *.hotline here), then the sources to show "
                   "(default: all with data)");
  }
};

// Whether `path` begins like a profile, whatever its name.
bool IsProfile(const std::string& path) {
  uint8_t magic[sizeof format::kMagic] = {};
  FILE* f = fopen(path.c_str(), "rbe");
  bool is = f && fread(magic, 1, sizeof magic, f) == sizeof magic &&
            std::memcmp(magic, format::kMagic, sizeof magic) == 0;
  if (f) fclose(f);
  return is;
}

int RunAnnotate(AnnotateCommandOptions& o) {
  std::string file;
  std::vector<std::string> sources = o.arguments;
  if (!sources.empty() && (sources[0].ends_with(".hotline") || IsProfile(sources[0]))) {
    file = sources[0];
    sources.erase(sources.begin());
  }
  Expected<std::string> path = ProfileArgument(file);
  if (!path) {
    fmt::print(stderr, "hotline: annotate: {}\n", path.status().message());
    return 1;
  }
  if (file.empty()) fmt::print(stderr, "hotline: reading {} (the newest profile here)\n", *path);
  o.annotate.sources = sources;
  o.annotate.color = !o.no_color && !o.annotate.machine && UseColor(o.color);
  symbolize::Symbolizer symbolizer;
  model::SymbolizerResolver resolver(symbolizer);
  format::ReadStats stats;
  Expected<model::Profile> profile = model::LoadProfile(*path, resolver, {}, &stats);
  if (!profile) {
    fmt::print(stderr, "hotline: {}\n", profile.status().message());
    return 1;
  }
  if (stats.damaged())
    fmt::print(stderr, "hotline: warning: {}: damaged, annotating what could be read: {}\n", *path,
               stats.summary());
  for (const std::string& w : profile->warnings) fmt::print(stderr, "hotline: warning: {}\n", w);
  // What was asked for and cannot be: a directory that is not there, a source the profile has
  // no file of.
  for (const std::string& dir : o.annotate.source_dirs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
      fmt::print(stderr, "hotline: warning: annotate: --source-dir {}: no such directory\n", dir);
  }
  // A source the profile has no file of is an error: nothing asked for can be shown.
  bool unknown_source = false;
  for (const std::string& source : sources) {
    bool known =
        std::any_of(profile->files.begin(), profile->files.end(),
                    [&](const model::File& f) { return report::SourceMatches(f.path, source); });
    if (!known) {
      fmt::print(stderr, "hotline: annotate: {} matches no source file of {}\n", source, *path);
      unknown_source = true;
    }
  }
  if (unknown_source) return 1;
  // Counts but no timing (a counts-only run): the instructions executed stand in for time.
  std::optional<CountCosts> costs;
  if (profile->summary.exact_line_counts && profile->summary.samples == 0) {
    Expected<CountCosts> counted = CostsOfCounts(*path, *profile);
    if (counted.ok()) {
      costs = std::move(*counted);
      o.annotate.costs = &costs->model;
      o.annotate.line_costs = costs->lines;
    } else {
      fmt::print(stderr, "hotline: note: no costs from counts: {}\n", counted.status().message());
    }
  }
  std::string out;
  report::AnnotateMessages messages;
  report::PrintAnnotated(*profile, o.annotate, out, messages);
  for (const std::string& w : messages.warnings) fmt::print(stderr, "hotline: warning: {}\n", w);
  const std::vector<std::string>& notes = messages.notes;
  if (!sources.empty() || notes.size() == 1) {
    for (const std::string& n : notes) fmt::print(stderr, "hotline: note: {}\n", n);
  } else if (!notes.empty()) {
    // Without a list of sources every file with data is tried: libraries' sources are rarely
    // installed, so say it once.
    fmt::print(stderr, "hotline: note: {} of the sources with data were not found, e.g. {}\n",
               notes.size(), notes.front());
  }
  if (messages.system_files)
    fmt::print(stderr, "hotline: note: {} system file{} with data left out (--system shows them)\n",
               messages.system_files, messages.system_files == 1 ? "" : "s");
  if (messages.files_below_cutoff)
    fmt::print(stderr,
               "hotline: note: {} file{} with data but no function above the cutoff left out "
               "(--all shows them)\n",
               messages.files_below_cutoff, messages.files_below_cutoff == 1 ? "" : "s");
  fmt::print("{}", out);
  return 0;
}

}  // namespace

void RegisterAnnotateCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<AnnotateCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "annotate", "the sources with count, time, average and % on the left of each line");
  options->Register(*cmd);
  cmd->callback([options, exit_code] { *exit_code = RunAnnotate(*options); });
}

}  // namespace hotline::cli

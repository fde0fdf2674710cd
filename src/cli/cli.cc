#include "cli/cli.h"

#include <fmt/core.h>
#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <new>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/profile_path.h"
#include "format/schema.h"

namespace hotline::cli {

CLI::Validator Positive() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        double value = strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0') return "not a number: " + text;
        return value > 0 ? "" : "must be above 0, not " + text;
      },
      "POSITIVE");
}

namespace {

constexpr const char* kVersion = "hotline 0.1.0";

// Edits (insertions, deletions, substitutions, swaps of neighbours) from `a` to `b`.
size_t Distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

CLI::App* FindCommand(CLI::App& app, const std::string& name) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    if (sub->get_name() == name) return sub;
  return nullptr;
}

// "unknown command 'recrod'; did you mean 'record'?" and the commands there are.
void UnknownCommand(CLI::App& app, const std::string& word) {
  std::string commands, closest;
  size_t best = 3;  // more edits than two: no suggestion
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    commands += fmt::format("  {:<10} {}\n", sub->get_name(), sub->get_description());
    if (size_t d = Distance(word, sub->get_name()); d < best) best = d, closest = sub->get_name();
  }
  fmt::print(stderr, "hotline: unknown command '{}'{}\ncommands:\n{}", word,
             closest.empty() ? "" : fmt::format("; did you mean '{}'?", closest), commands);
}

// The profiles a command line names (its arguments that are files beginning with the format's
// magic), or the newest here when it names none: what an error that escaped a command concerns.
std::string ProfilesNamed(int argc, char** argv) {
  std::string named;
  for (int i = 2; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    char magic[sizeof format::kMagic];
    if (!in.read(magic, sizeof magic) || std::memcmp(magic, format::kMagic, sizeof magic) != 0)
      continue;
    if (!named.empty()) named += ", ";
    named += argv[i];
  }
  if (named.empty())
    if (Expected<std::string> newest = NewestProfileHere(); newest) named = *newest;
  return named;
}

}  // namespace

int RunCli(int argc, char** argv) {
  // libdwfl would ask debuginfod servers for missing debug info; hotline never goes online.
  unsetenv("DEBUGINFOD_URLS");
  CLI::App app{"hotline: a source-level profiler for native programs", "hotline"};
  app.require_subcommand(1);
  app.set_version_flag("-V,--version", kVersion);
  // A flag given a value (--top=5, --heap=no) is an error, never silently the flag.
  app.option_defaults()->disable_flag_override();
  int exit_code = 0;
  RegisterRecordCommand(app, &exit_code);
  RegisterDumpCommand(app, &exit_code);
  RegisterReportCommand(app, &exit_code);
  RegisterAnnotateCommand(app, &exit_code);
  RegisterMergeCommand(app, &exit_code);
  RegisterDiffCommand(app, &exit_code);
  RegisterHtmlCommand(app, &exit_code);
  RegisterExportCommand(app, &exit_code);
  RegisterHistoryCommand(app, &exit_code);
  RegisterCheckCommand(app, &exit_code);
  RegisterSweepCommand(app, &exit_code);
  RegisterTexCommand(app, &exit_code);
  // What CLI11 would answer with "A subcommand is required": the usage, a version, help on one
  // command, or a suggestion.
  std::string first = argc > 1 ? argv[1] : "";
  if (argc == 1) {
    fmt::print(stderr, "{}", app.help());
    return 2;
  }
  if (first == "version") {
    fmt::print("{}\n", kVersion);
    return 0;
  }
  if (first == "help") {
    const CLI::App* sub = argc > 2 ? FindCommand(app, argv[2]) : nullptr;
    if (argc > 2 && !sub) {
      UnknownCommand(app, argv[2]);
      return 2;
    }
    fmt::print("{}", sub ? sub->help() : app.help());
    return 0;
  }
  if (!first.empty() && first[0] != '-' && !FindCommand(app, first)) {
    UnknownCommand(app, first);
    return 2;
  }
  if (first[0] == '-' && first != "-h" && first != "--help" && first != "-V" &&
      first != "--version") {
    fmt::print(stderr, "hotline: unknown option '{}': options go after the command\n{}", first,
               app.help());
    return 2;
  }
  // diff's runs after `--` are the new side: CLI11 would fold them into the base's.
  static char new_runs[] = "--new";
  if (first == "diff")
    for (int i = 2; i < argc; ++i)
      if (std::string(argv[i]) == "--") {
        argv[i] = new_runs;
        break;
      }
  try {
    app.parse(first == "sweep" ? TakeSweepProgram(argc, argv)
              : first == "tex" ? TakeTexCommand(argc, argv)
                               : TakeRecordProgram(app, argc, argv),
              argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    // CLI11's words for --flag=value, in ours.
    const std::string override_text = " was given a disallowed flag override";
    if (size_t at = what.find(override_text); at != std::string::npos)
      what = fmt::format("--{} takes no value{}", what.substr(0, at),
                         what.starts_with("top") ? " (how many top lines: -t N)" : "");
    fmt::print(stderr, "hotline: {}\n", what);
    return 2;
  } catch (const std::exception& e) {
    // The commands return a status; what escapes them anyway (an allocation larger than the
    // memory, which a profile's values should never ask for) ends the command, not the process
    // by an abort.
    std::string files = ProfilesNamed(argc, argv);
    bool memory = dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
    fmt::print(stderr, "hotline: {}: {}{}{}\n", first, files, files.empty() ? "" : ": ",
               memory ? "out of memory (the profile may be damaged)"
                      : fmt::format("internal error: {}", e.what()));
    return 1;
  }
  return exit_code;
}

int TakeAfterSeparator(int argc, char** argv, std::vector<std::string>& command) {
  for (int i = 2; i < argc; ++i)
    if (std::string(argv[i]) == "--") {
      command.insert(command.end(), argv + i + 1, argv + argc);
      return i;
    }
  return argc;
}

}  // namespace hotline::cli

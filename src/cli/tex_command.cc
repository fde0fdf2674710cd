// `hotline tex [options] -- pdflatex doc.tex`: runs a TeX document on the profiling pdfTeX
// (frontends/tex, docs/tex.md) and writes doc.hotline.
#include <fmt/core.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/profile_path.h"
#include "record/tex_engine.h"
#include "export/export.h"

namespace hotline::cli {

namespace {

namespace fs = std::filesystem;

// Everything `hotline tex` accepts, declared once: Register() derives parsing and --help.
struct TexOptions {
  std::string output;
  uint32_t repeat = 1;
  std::string cost = "time";
  std::string start = "yes";
  std::vector<std::string> command;  // after `--`
  bool saw_separator = false;

  void Register(CLI::App& cmd) {
    cmd.add_option("-o,--output", output, "the profile to write (default: DOC.hotline here)");
    cmd.add_option("--repeat", repeat,
                   "run the document N times and keep every run: the report shows their sum and "
                   "each row's spread")
        ->check(CLI::Range(1u, 1000u));
    cmd.add_option("--cost", cost,
                   "time: CPU time of each command slot; tokens: tokens read and commands run "
                   "(the same from run to run)")
        ->check(CLI::IsMember({"time", "tokens"}));
    cmd.add_option("--start", start,
                   "yes: profile from the start; no: only between \\profileon and \\profileoff")
        ->check(CLI::IsMember({"yes", "no"}));
  }
};

std::shared_ptr<TexOptions> g_tex_options;

// The document a TeX command line names: its first argument that is not an option, a format
// (&fmt) or TeX code (\input ...). Empty when there is none.
std::string DocumentOf(const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.empty() || a[0] == '-' || a[0] == '&' || a[0] == '\\' || a[0] == '*') continue;
    return a;
  }
  return "";
}

// The profile's default name: the document's, without .tex, here (where TeX writes its own).
std::string DefaultOutput(const std::string& document) {
  if (document.empty()) return "texput.hotline";
  fs::path p = fs::path(document).filename();
  if (p.extension() == ".tex") p.replace_extension();
  return p.string() + ".hotline";
}

int RunTex(TexOptions& o) {
  if (!o.saw_separator || o.command.empty()) {
    fmt::print(stderr,
               "hotline tex: give the TeX command after --, e.g. hotline tex -- pdflatex "
               "doc.tex\n");
    return 2;
  }
  const record::TexFormatSpec* spec = record::FindTexFormat(o.command[0]);
  if (!spec) {
    fmt::print(stderr, "hotline tex: unknown TeX command '{}' ({})\n", o.command[0],
               record::KnownTexCommands());
    return 2;
  }
  std::string document = DocumentOf(o.command);
  std::error_code ec;
  if (!document.empty() && !fs::exists(document, ec) && !fs::exists(document + ".tex", ec)) {
    fmt::print(stderr, "hotline tex: {}: no such document\n", document);
    return 2;
  }
  Expected<record::TexEngine> engine = record::EnsureTexEngine();
  if (!engine) {
    fmt::print(stderr, "hotline tex: {}\n", engine.status().message());
    return 1;
  }
  Expected<std::string> format = record::EnsureTexFormat(*engine, *spec);
  if (!format) {
    fmt::print(stderr, "hotline tex: {}\n", format.status().message());
    return 1;
  }
  std::string output = o.output.empty() ? DefaultOutput(document) : o.output;
  std::string absolute = fs::absolute(output, ec).string();
  std::vector<std::string> args(o.command.begin() + 1, o.command.end());
  std::vector<std::string> runs;
  int rc = 0;
  for (uint32_t i = 0; i < o.repeat; ++i) {
    std::string run = o.repeat == 1 ? absolute : fmt::format("{}.run{}", absolute, i + 1);
    std::map<std::string, std::string> env = {
        {"HOTLINE_TEX_OUTPUT", run}, {"HOTLINE_TEX_COST", o.cost}, {"HOTLINE_TEX_START", o.start}};
    int status = record::RunTexEngine(*engine, *spec, *format, args, env);
    if (i == 0 || status != 0) rc = status;
    if (fs::exists(run, ec)) runs.push_back(run);
  }
  if (o.repeat > 1) {
    Status s = WriteConcatenation(runs, absolute);
    for (const std::string& run : runs) fs::remove(run, ec);
    if (!s.ok()) {
      fmt::print(stderr, "hotline tex: {}\n", s.message());
      return rc ? rc : 1;
    }
  }
  if (!fs::exists(absolute, ec)) {
    fmt::print(stderr, "hotline tex: the engine wrote no profile ({})\n", output);
    return rc ? rc : 1;
  }
  fmt::print(stderr, "hotline tex: wrote {}{}\n", output,
             o.repeat > 1 ? fmt::format(" ({} runs)", runs.size()) : "");
  // The engine's status is the command's: a TeX error fails as it would without hotline.
  return rc;
}

}  // namespace

void RegisterTexCommand(CLI::App& app, int* exit_code) {
  g_tex_options = std::make_shared<TexOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tex", "profile a TeX or LaTeX run: hotline tex [options] -- pdflatex doc.tex");
  g_tex_options->Register(*cmd);
  cmd->footer(
      "Everything after -- is the TeX command line (pdflatex, pdftex or tex, then its "
      "arguments); it runs on hotline's profiling pdfTeX, built on first use.");
  auto options = g_tex_options;
  cmd->callback([options, exit_code] { *exit_code = RunTex(*options); });
}

int TakeTexCommand(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) != "tex" || !g_tex_options) return argc;
  int separator = TakeAfterSeparator(argc, argv, g_tex_options->command);
  g_tex_options->saw_separator = separator < argc;
  return separator;
}

}  // namespace hotline::cli

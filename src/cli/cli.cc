#include "cli/cli.h"

#include <fmt/core.h>
#include <stdlib.h>

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace hotline::cli {

int RunCli(int argc, char** argv) {
  // libdwfl would ask debuginfod servers for missing debug info; hotline never goes online.
  unsetenv("DEBUGINFOD_URLS");
  CLI::App app{"hotline: a source-level profiler for native programs", "hotline"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "hotline 0.1.0");
  int exit_code = 0;
  RegisterRecordCommand(app, &exit_code);
  RegisterDumpCommand(app, &exit_code);
  RegisterReportCommand(app, &exit_code);
  RegisterAnnotateCommand(app, &exit_code);
  try {
    app.parse(TakeRecordProgram(app, argc, argv), argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "hotline: {}\n", e.what());
    return 2;
  }
  return exit_code;
}

}  // namespace hotline::cli

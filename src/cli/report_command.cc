// Placeholder until the report subcommand lands; replaced by its real implementation.
#include "cli/commands.h"

namespace hotline::cli {

void RegisterReportCommand(CLI::App& app, int* exit_code) {
  (void)app;
  (void)exit_code;
}

}  // namespace hotline::cli

// Placeholder until the record subcommand lands; replaced by its real implementation.
#include "cli/commands.h"

namespace hotline::cli {

void RegisterRecordCommand(CLI::App& app, int* exit_code) {
  (void)app;
  (void)exit_code;
}

}  // namespace hotline::cli

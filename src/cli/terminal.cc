#include "cli/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

namespace hotline::cli {

void AddColorOption(CLI::App& cmd, std::string& mode) {
  cmd.add_option("--color", mode,
                 "heat colours: auto (on a terminal, unless NO_COLOR is set or TERM=dumb), "
                 "always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
}

bool UseColor(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return isatty(STDOUT_FILENO) && !(no_color && *no_color) &&
         !(term && std::string(term) == "dumb");
}

uint32_t TerminalWidth() {
  winsize size{};
  if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

}  // namespace hotline::cli

#include "cli/child_process.h"

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "export/export.h"

namespace hotline::cli {

int WaitForProgram(pid_t child) {
  struct sigaction ignore {
  }, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

Status WriteConcatenation(const std::vector<std::string>& files, const std::string& output) {
  std::string bytes;
  for (const std::string& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream content;
    content << in.rdbuf();
    if (!in) return Status::Error(file + ": cannot read it");
    bytes += content.str();
  }
  return exporter::WriteFileAtomically(output, bytes);
}

}  // namespace hotline::cli

// Starting the program hotline records, and waiting for it. The program is forked and waits at
// a gate until the recorder has opened its events on it (or knows it cannot); it learns there
// which sampler runs, and so whether the runtime enters it (docs/runtime-protocol.md).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace hotline::record {

// The runtime beside the hotline executable (build/bin → build/lib, /usr/local/bin →
// /usr/local/lib), or $HOTLINE_RUNTIME.
Expected<std::string> FindRuntime();

// What the program is started with.
struct ChildPlan {
  std::string path;               // as execv takes it
  std::vector<std::string> argv;  // argv[0] included
  // Set in the program's environment whatever the gate says (a --coverage build's GCOV_PREFIX).
  std::vector<std::pair<std::string, std::string>> environment;
  // The runtime's variables (LD_PRELOAD, HOTLINE_*): with the kernel sampler only when the
  // program needs the runtime (empty otherwise), and when it must sample itself.
  std::vector<std::pair<std::string, std::string>> runtime_with_kernel;
  std::vector<std::pair<std::string, std::string>> runtime_sampling_itself;
};

// The variables that bring the runtime into the program: LD_PRELOAD with `runtime` first (an
// existing value kept after it), HOTLINE_OUTPUT, HOTLINE_ROOT_PID (filled in by the child),
// HOTLINE_OPTIONS and, when given, HOTLINE_WATCH.
std::vector<std::pair<std::string, std::string>> RuntimeVariables(const std::string& runtime,
                                                                  const std::string& output,
                                                                  const std::string& options,
                                                                  const std::string& watch);

class Launch {
 public:
  Launch() = default;
  ~Launch();
  Launch(const Launch&) = delete;
  Launch& operator=(const Launch&) = delete;

  // Forks the child, which waits at the gate.
  Status start(const ChildPlan& plan);
  pid_t pid() const { return pid_; }
  // Lets the child go on: `kernel` when the kernel samples it, false when it samples itself.
  void open(bool kernel);
  // Kills a child that must not run after all, and waits for it.
  void abandon();
  // Waits for the child to end with the terminal's Ctrl-C and Ctrl-\ left to it; the signals
  // sent to hotline itself (TERM, HUP, USR1, USR2) are forwarded to it, except `toggle_signal`
  // when `on_toggle` is given, which is called instead. `pump` (when given) runs meanwhile, each
  // call waiting a little. Returns the raw wait status; *exec_errno is the errno of an exec that
  // failed (0 when the program ran).
  int wait(const std::function<void()>& pump, int toggle_signal,
           const std::function<void()>& on_toggle, int* exec_errno);

 private:
  pid_t pid_ = -1;
  int gate_ = -1;   // the parent's end of the gate
  int error_ = -1;  // the parent's end of the pipe an exec failure is reported on
};

// Waits for `child` (a program hotline started for the user), leaving the terminal's Ctrl-C and
// Ctrl-\ to it meanwhile. Returns its exit code as a shell reports it: 128+N for a death by
// signal N.
int WaitForProgram(pid_t child);
// The same, returning the raw wait status.
int WaitForProgramStatus(pid_t child);

}  // namespace hotline::record

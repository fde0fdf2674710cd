#include "record/launch.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace hotline::record {
namespace {

volatile sig_atomic_t g_child = 0;
volatile sig_atomic_t g_toggle_signal = 0;
volatile sig_atomic_t g_toggles = 0;  // toggle signals hotline received, not yet acted on

void ForwardSignal(int sig) {
  if (sig == g_toggle_signal) {
    g_toggles = g_toggles + 1;
    return;
  }
  if (g_child > 0) kill(g_child, sig);
}

void SetAll(const std::vector<std::pair<std::string, std::string>>& variables) {
  for (const auto& [name, value] : variables) setenv(name.c_str(), value.c_str(), 1);
}

// The child: waits at the gate, sets its environment for the sampler it learned of there, then
// executes the program. An exec failure's errno goes to `error_fd`.
[[noreturn]] void RunChild(const ChildPlan& plan, int gate_fd, int error_fd) {
  char go = 's';
  if (read(gate_fd, &go, 1) != 1) _exit(127);
  SetAll(plan.environment);
  const auto& runtime = go == 'k' ? plan.runtime_with_kernel : plan.runtime_sampling_itself;
  SetAll(runtime);
  if (!runtime.empty()) setenv("HOTLINE_ROOT_PID", std::to_string(getpid()).c_str(), 1);
  std::vector<char*> argv;
  for (const std::string& a : plan.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(plan.path.c_str(), argv.data());
  int err = errno;
  (void)!write(error_fd, &err, sizeof err);
  _exit(127);
}

}  // namespace

Expected<std::string> FindRuntime() {
  if (const char* env = getenv("HOTLINE_RUNTIME"); env && *env) {
    if (access(env, R_OK) != 0)
      return Status::Error(std::string("HOTLINE_RUNTIME=") + env + ": not found");
    return std::string(env);
  }
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return Status::Error("cannot find the hotline executable's own path");
  self[n] = '\0';
  std::string dir = self;
  dir = dir.substr(0, dir.rfind('/'));
  std::string runtime = dir + "/../lib/libhotline-rt.so";
  if (access(runtime.c_str(), R_OK) != 0)
    return Status::Error("the runtime is missing: " + runtime + " (set HOTLINE_RUNTIME)");
  char resolved[PATH_MAX];
  return std::string(realpath(runtime.c_str(), resolved) ? resolved : runtime.c_str());
}

std::vector<std::pair<std::string, std::string>> RuntimeVariables(const std::string& runtime,
                                                                  const std::string& output,
                                                                  const std::string& options,
                                                                  const std::string& watch) {
  std::string preload = runtime;
  if (const char* old = getenv("LD_PRELOAD"); old && *old) preload += std::string(":") + old;
  std::vector<std::pair<std::string, std::string>> variables = {
      {"LD_PRELOAD", preload}, {"HOTLINE_OUTPUT", output}, {"HOTLINE_OPTIONS", options}};
  if (!watch.empty()) variables.emplace_back("HOTLINE_WATCH", watch);
  return variables;
}

Launch::~Launch() {
  if (gate_ >= 0) close(gate_);
  if (error_ >= 0) close(error_);
}

Status Launch::start(const ChildPlan& plan) {
  int gate[2], error[2];
  if (pipe2(gate, O_CLOEXEC) != 0) return Status::Error(std::string("pipe: ") + strerror(errno));
  if (pipe2(error, O_CLOEXEC) != 0) {
    close(gate[0]);
    close(gate[1]);
    return Status::Error(std::string("pipe: ") + strerror(errno));
  }
  pid_ = fork();
  if (pid_ < 0) {
    int err = errno;
    for (int fd : {gate[0], gate[1], error[0], error[1]}) close(fd);
    return Status::Error("cannot start " + plan.argv[0] + ": " + strerror(err));
  }
  if (pid_ == 0) {
    close(gate[1]);
    close(error[0]);
    RunChild(plan, gate[0], error[1]);
  }
  close(gate[0]);
  close(error[1]);
  gate_ = gate[1];
  error_ = error[0];
  return Status();
}

void Launch::open(bool kernel) {
  if (gate_ < 0) return;
  (void)!write(gate_, kernel ? "k" : "s", 1);
  close(gate_);
  gate_ = -1;
}

void Launch::abandon() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

int Launch::wait(const std::function<void()>& pump, int toggle_signal,
                 const std::function<void()>& on_toggle, int* exec_errno) {
  g_child = pid_;
  g_toggle_signal = on_toggle ? toggle_signal : 0;
  g_toggles = 0;
  struct sigaction ignore {
  }, forward{}, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  forward.sa_handler = ForwardSignal;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  for (int sig : {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2}) sigaction(sig, &forward, nullptr);
  if (g_toggle_signal > 0) sigaction(g_toggle_signal, &forward, nullptr);
  int status = 0;
  sig_atomic_t acted = 0;
  for (;;) {
    pid_t done = waitpid(pid_, &status, pump ? WNOHANG : 0);
    if (done == pid_ || (done < 0 && errno != EINTR)) break;
    for (; acted != g_toggles; ++acted) on_toggle();
    if (pump && done == 0) pump();
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  *exec_errno = 0;
  if (read(error_, exec_errno, sizeof *exec_errno) != sizeof *exec_errno) *exec_errno = 0;
  return status;
}

int WaitForProgramStatus(pid_t child) {
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
  return status;
}

int WaitForProgram(pid_t child) {
  int status = WaitForProgramStatus(child);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace hotline::record

// The runtime's options, read once from the environment (docs/runtime-protocol.md).
#pragma once

#include <cstdint>

#include "format/schema.h"

namespace hotline::rt {

struct Config {
  bool active = false;  // HOTLINE_OUTPUT was given
  char output[4096] = {};
  uint64_t root_pid = 0;
  bool later_image = false;  // an image exec'd after the first one under follow_exec
  uint32_t freq_hz = 1000;
  format::ClockMode clock = format::ClockMode::kCpu;
  uint32_t max_depth = 256;
  format::Unwinder unwinder = format::Unwinder::kDwarf;
  bool start_paused = false;
  int toggle_signal = 12;  // SIGUSR2
  bool follow_exec = false;
  format::TraceMode trace = format::TraceMode::kNone;
  bool heap = false;
  // Sampled heap mode: one allocation per this many bytes on average (0: every allocation), and
  // the seed of its random gaps (0: a different one each run).
  uint64_t heap_sample_bytes = 0;
  uint64_t heap_seed = 0;
  // `hotline record` samples the process from outside (perf_event rings): the runtime arms no
  // timer and only says so, with the period, in the PROCESS record.
  bool kernel_sampler = false;
  // HOTLINE_WATCH: the variables `hotline record --watch` resolved (watch.h), for the root
  // image only; empty when none.
  char watch[8192] = {};

  bool sampling() const { return freq_hz != 0; }  // freq=0: counts only, no timers
  // Stacks are unwound in the program: for its own samples, or for the heap's allocations.
  bool unwindsInProcess() const { return heap || (sampling() && !kernel_sampler); }
  uint64_t periodNs() const { return freq_hz ? 1000000000ull / freq_hz : 0; }
};

// Reads HOTLINE_* from the environment. Unknown keys are ignored; bad values keep defaults.
void ReadConfig(Config* config);

// Removes the runtime from LD_PRELOAD and the HOTLINE_* variables from the environment, so
// programs the host executes run unprofiled. Marks later images when following exec.
void PrepareEnvironmentForChildren(const Config& config);

// Under follow_exec, the environment a program hands to execve, execle, execvpe or posix_spawn
// keeps the runtime's variables (LD_PRELOAD with the runtime, HOTLINE_OUTPUT, HOTLINE_OPTIONS,
// HOTLINE_LATER_IMAGE): a program that builds its children's environment itself still has them
// followed. get() is `envp` itself when nothing is missing (or the follow is off), else a copy
// on this object, which lives on the caller's stack (vfork children allocate nothing).
class ExecEnvironment {
 public:
  explicit ExecEnvironment(char* const* envp);
  char* const* get() const { return envp_; }

 private:
  static constexpr size_t kMaxEntries = 1024;  // beyond, the environment is passed as it is
  char* const* envp_;
  char* entries_[kMaxEntries];
  char preload_[4096 + 12];
};

// Opens the profile this process writes: the configured output for the root process's first
// image (hotline record made it), BASE.PID[.N].hotline beside it otherwise. Such a file of the
// runtime's own appears only once it holds its header: the fd is then of an unnamed file in that
// folder (O_TMPFILE), `path_out` is left empty, and NameProfileFile names it. Returns the fd or -1.
int OpenProfileFile(const Config& config, bool root_image, char* path_out, uint64_t path_size);

// Gives the unnamed profile `fd` its name, BASE.PID.hotline or BASE.PID.N.hotline when that is
// taken, into `path_out`. A process killed before this leaves no file, where an empty one would be
// a profile nobody can read.
bool NameProfileFile(const Config& config, int fd, char* path_out, uint64_t path_size);

}  // namespace hotline::rt

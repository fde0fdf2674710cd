// The recorder's side of kernel sampling: after the run, each image's samples (the program's,
// its forked children's, the programs they executed) join that image's profile.
#pragma once

#include <sys/types.h>

#include <string>

#include "base/status.h"
#include "format/schema.h"
#include "sampler/recording.h"

namespace hotline::cli {

// What a profile written without the runtime (a static program, a child that wrote nothing)
// says about how it was sampled.
struct KernelSettings {
  uint64_t period_ns = 0;
  uint32_t max_depth = 0;
  format::ClockMode clock = format::ClockMode::kCpu;
  bool follow_exec = false;
  // The runtime is in the program's processes: a child gets a profile only when its runtime
  // began one (it had run a sampling period); a child's few samples of its exit do not make one.
  bool runtime = false;
};

struct KernelResult {
  Status status;
  uint64_t samples_not_followed = 0;    // of programs executed without --follow-exec
  uint64_t samples_still_running = 0;   // of processes still running when the program ended
  uint64_t samples_short_children = 0;  // of children too short for a profile of their own
};

// How the program ended, from its wait status.
format::EndRecord EndFromStatus(int status);

// Appends each image's stream to its profile: `output` for the program as started, the
// runtime's BASE.PID[.N].hotline for the others (made when the runtime wrote none), after the
// runtime's records. `end` (how the program ended; none when unknown) is its END when the
// profile has none or the runtime's says otherwise.
KernelResult AddKernelSamples(const std::string& output, const sampler::Recording& recording,
                              const KernelSettings& settings, const format::EndRecord* end);

}  // namespace hotline::cli

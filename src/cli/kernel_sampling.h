// The recorder's side of `hotline record --sampler kernel`: the program is sampled from outside
// while hotline waits for it, and the samples are added to its profile afterwards.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "sampler/recording.h"

namespace hotline::cli {

// What a profile written without the runtime (a static program) says about its process.
struct SampledProcess {
  pid_t pid = 0;
  std::string exe;
  std::vector<std::string> argv;
  uint64_t period_ns = 0;
  uint32_t max_depth = 0;
};

// Appends the recorder's stream (`stream_fd`, read from its start) to the profile at `output`:
// after the runtime's records when the runtime wrote some, or else after a file header and a
// process record of its own; and an END record from the wait status `status` when the profile
// has none (the program was killed, or never ran the runtime).
Status AddKernelSamples(const std::string& output, int stream_fd, const SampledProcess& process,
                        int status);

}  // namespace hotline::cli

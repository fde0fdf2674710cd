// The recording session: `hotline record`'s work without its command line. RecordProgram starts
// a program, decides which collectors run (the kernel samples from outside wherever it may; the
// runtime enters the program only when the program needs it: -finstrument-functions, calls to
// hotline's API, or --heap, --heap-sample, --watch, --sampler signal), reads the kernel's rings
// while it runs and finishes every profile (record/profiles.h). AttachProcess does the same for
// a running process. Nothing here prints: what the user should hear comes back as messages.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "sampler/perf_recorder.h"

namespace hotline::record {

enum class SamplerChoice { kAuto, kKernel, kSignal };
enum class TraceChoice { kAuto, kCounts, kTimed, kNone };

// What a recording asks for: `hotline record`'s options, checked for range and spelling by the
// command line already.
struct Request {
  std::vector<std::string> command;  // the program and its arguments
  std::string output;                // the profile; empty: PROGRAM.hotline here
  uint32_t freq_hz = 1000;           // 0: no samples
  bool wall_clock = false;
  uint32_t max_depth = 256;
  bool frame_pointers = false;  // the in-process sampler's unwinder: frame pointers, not CFI
  bool start_paused = false;
  int toggle_signal = SIGUSR2;  // 0: none
  bool follow_exec = false;
  TraceChoice trace = TraceChoice::kAuto;
  SamplerChoice sampler = SamplerChoice::kAuto;
  uint32_t stack_bytes = sampler::kMaxStackBytes;
  bool heap = false;
  uint64_t heap_sample = 0;  // bytes between heap samples on average; 0: every allocation
  uint64_t heap_seed = 0;
  bool counts_only = false;
  bool perl_sample = false;
  std::vector<std::string> watch;  // variables, by source name
  bool watch_reads = false;
};

// `record -p PID`.
struct AttachRequest {
  pid_t pid = 0;
  double duration_s = 0;  // 0: until stop() or the process's end
  std::string output;     // empty: EXE.hotline here
  uint32_t freq_hz = 1000;
  bool wall_clock = false;
  uint32_t max_depth = 256;
  uint32_t stack_bytes = sampler::kMaxStackBytes;
};

struct Message {
  enum Kind { kNote, kHint, kWarning, kError } kind = kNote;
  std::string text;
};
using Listener = std::function<void(const Message&)>;

struct WrittenProfile {
  std::string path;
  uint64_t samples = 0;
  size_t threads = 0;
  uint64_t bytes = 0;
  bool first = false;    // the program's own (the others are its children's and successors')
  uint32_t ppid = 0;     // the others': their parent
  bool executed = false;  // a program executed (not a forked child)
  std::string exe;
};

struct Outcome {
  int wait_status = 0;     // the program's, as waitpid gives it (a perl program: the same)
  bool ran = false;        // false: refused before the program ran (the error says why)
  bool profile_lost = false;  // a profile could not be written (a message says why)
  bool attached_ended = false;  // attach: the process ended while sampled
  std::vector<WrittenProfile> profiles;
};

// Runs the request's program and records it. Refusals before the program runs (no such
// program, a bad combination of options, an output that cannot be written) are errors carrying
// the exit code a shell would use (*exit_code: 127, 126, 2 or 1).
Expected<Outcome> RecordProgram(const Request& request, const Listener& listen, int* exit_code);

// Samples a running process from outside until `duration_s`, `*stop` turning true, or its end,
// then detaches: the process runs on as before, never having been stopped.
Expected<Outcome> AttachProcess(const AttachRequest& request, const volatile sig_atomic_t* stop,
                                const Listener& listen, int* exit_code);

}  // namespace hotline::record

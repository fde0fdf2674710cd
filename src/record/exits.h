// How the processes of a run ended, for those whose parent is not hotline. Their exit status is
// their parent's to collect; the kernel's process-events connector tells it to a listener as
// each process exits, which root (CAP_NET_ADMIN) may be. Without it the recorder reads the
// status from /proc while the process is a zombie (sampler::Recording), which its parent's
// wait can take away first: then the profile says the process ended, and not how.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <unordered_map>

namespace hotline::record {

class ExitListener {
 public:
  ExitListener();
  ~ExitListener();
  ExitListener(const ExitListener&) = delete;
  ExitListener& operator=(const ExitListener&) = delete;

  // Whether the kernel lets hotline listen (it may not: not root, or no connector).
  bool listening() const { return fd_ >= 0; }
  // Reads the exits reported so far (never waits).
  void drain();
  // The wait status process `pid` ended with, or -1 when none was reported.
  int statusOf(pid_t pid) const;

 private:
  int fd_ = -1;
  std::unordered_map<pid_t, int> statuses_;
};

}  // namespace hotline::record

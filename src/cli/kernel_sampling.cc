#include "cli/kernel_sampling.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "format/raw_profile.h"
#include "format/writer.h"

namespace hotline::cli {
namespace {

uint64_t Now(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

format::EndRecord EndFromStatus(int status) {
  format::EndRecord end;
  end.time = Now(CLOCK_MONOTONIC);
  if (WIFSIGNALED(status)) {
    end.how = format::EndHow::kSignal;
    end.code = uint64_t(WTERMSIG(status));
  } else {
    end.how = format::EndHow::kExit;
    end.code = uint64_t(WIFEXITED(status) ? WEXITSTATUS(status) : 0);
  }
  return end;
}

Status CopyStream(int from, int to) {
  if (lseek(from, 0, SEEK_SET) != 0)
    return Status::Error(std::string("kernel samples: ") + strerror(errno));
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = read(from, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Error(std::string("kernel samples: ") + strerror(errno));
    if (n == 0) return Status();
    for (ssize_t done = 0; done < n;) {
      ssize_t w = write(to, buffer + done, size_t(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return Status::Error(std::string("kernel samples: ") + strerror(errno));
      done += w;
    }
  }
}

}  // namespace

Status AddKernelSamples(const std::string& output, int stream_fd, const SampledProcess& process,
                        int status) {
  int fd = open(output.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return Status::Error("cannot write the profile " + output + ": " + strerror(errno));
  struct stat st;
  bool runtime_wrote = fstat(fd, &st) == 0 && st.st_size > 0;
  bool has_end = false;
  if (runtime_wrote) {
    format::ReadStats stats;
    Expected<format::RawProfile> profile = format::LoadRawProfile(output, &stats);
    has_end = profile.ok() && profile->end.has_value();
  } else {
    // No runtime in the program (statically linked): the file is the recorder's from the start.
    format::Writer head;
    head.begin(fd, format::kFeatureSamples);
    std::vector<uint64_t> argv;
    for (const std::string& a : process.argv) argv.push_back(head.internString(a.c_str()));
    format::ProcessRecord r;
    r.pid = uint64_t(process.pid);
    r.ppid = uint64_t(getpid());
    r.realtime_ns = Now(CLOCK_REALTIME);
    r.time = Now(CLOCK_MONOTONIC);
    r.exe = head.internString(process.exe.c_str());
    r.argc = argv.size();
    r.argv = argv.data();
    r.sampler = format::Sampler::kKernelRecorder;
    r.period_ns = process.period_ns;
    r.max_depth = process.max_depth;
    head.add(r);
    head.flush();
  }
  Status copied = CopyStream(stream_fd, fd);
  if (copied.ok() && !has_end) {
    format::Writer tail;
    tail.beginAppend(fd);
    tail.add(EndFromStatus(status));
    tail.flush();
  }
  close(fd);
  return copied;
}

}  // namespace hotline::cli

#include "cli/kernel_sampling.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <vector>

#include "base/clock.h"
#include "cli/profile_path.h"
#include "format/raw_profile.h"
#include "format/writer.h"

namespace hotline::cli {
namespace {

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

// BASE.PID[.N].hotline files beside `output` whose process is `pid`, with their process records.
struct Candidate {
  std::string path;
  format::RawProcess process;
};

std::vector<Candidate> ProfilesOf(const std::string& output, uint32_t pid) {
  std::vector<Candidate> found;
  for (const std::string& path : ChildProfilePaths(output, pid)) {
    Expected<format::RawProfile> profile = format::LoadRawProfile(path, nullptr);
    if (profile.ok() && profile->process && profile->process->pid == pid)
      found.push_back(Candidate{path, *profile->process});
  }
  std::sort(found.begin(), found.end(),
            [](const Candidate& a, const Candidate& b) { return a.process.time < b.process.time; });
  return found;
}

// The profile the runtime wrote for `image`, or a free name for one of the recorder's own.
std::string ProfileFor(const std::string& output, const sampler::SampledImage& image,
                       uint32_t root_pid, bool* exists) {
  *exists = true;
  if (image.pid == root_pid && image.execs == 0) return output;
  std::vector<Candidate> candidates = ProfilesOf(output, image.pid);
  uint32_t execs_seen = 0;
  for (const Candidate& c : candidates) {
    bool exec_image = c.process.flags & format::kExecImage;
    if (!exec_image && image.execs == 0) return c.path;
    if (exec_image && ++execs_seen == image.execs) return c.path;
  }
  *exists = false;
  std::string base = ProfileBase(output);
  for (int n = 0;; ++n) {
    std::string path = base + "." + std::to_string(image.pid) +
                       (n ? "." + std::to_string(n) : std::string()) + ".hotline";
    if (access(path.c_str(), F_OK) != 0) return path;
  }
}

Status AddImage(const std::string& path, bool runtime_wrote, const sampler::SampledImage& image,
                const KernelSettings& settings, const format::EndRecord* end) {
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Error("cannot write the profile " + path + ": " + strerror(errno));
  struct stat st;
  bool has_end = false;
  if (runtime_wrote && fstat(fd, &st) == 0 && st.st_size > 0) {
    // The runtime's END stands when it agrees with how the process really ended: a return
    // from main reaches exit() inside libc, past the runtime, which then records code 0.
    Expected<format::RawProfile> profile = format::LoadRawProfile(path, nullptr);
    auto killed = [](const format::EndRecord& e) { return e.how == format::EndHow::kSignal; };
    has_end = profile.ok() && profile->end.has_value() &&
              (!end || (killed(*profile->end) == killed(*end) && profile->end->code == end->code));
  } else {
    // No runtime wrote this image's profile: the file is the recorder's from the start.
    format::Writer head;
    head.begin(fd, format::kFeatureSamples);
    std::vector<uint64_t> argv;
    for (const std::string& a : image.argv) argv.push_back(head.internString(a.c_str()));
    format::ProcessRecord r;
    r.pid = image.pid;
    r.ppid = image.ppid;
    r.realtime_ns = ClockNs(CLOCK_REALTIME);
    r.time = image.start_time ? image.start_time : ClockNs(CLOCK_MONOTONIC);
    r.exe = head.internString(image.exe.c_str());
    r.argc = argv.size();
    r.argv = argv.data();
    r.clock = settings.clock;
    r.sampler = format::Sampler::kKernelRecorder;
    r.period_ns = settings.period_ns;
    r.max_depth = settings.max_depth;
    r.flags = (image.forked ? uint64_t(format::kForkedChild) : 0) |
              (image.execs ? uint64_t(format::kExecImage) : 0);
    head.add(r);
    head.flush();
  }
  Status copied = CopyStream(image.stream_fd, fd);
  if (copied.ok() && !has_end && end) {
    format::Writer tail;
    tail.beginAppend(fd);
    tail.add(*end);
    tail.flush();
  }
  close(fd);
  return copied;
}

}  // namespace

format::EndRecord EndFromStatus(int status) {
  format::EndRecord end;
  end.time = ClockNs(CLOCK_MONOTONIC);
  if (WIFSIGNALED(status)) {
    end.how = format::EndHow::kSignal;
    end.code = uint64_t(WTERMSIG(status));
  } else {
    end.how = format::EndHow::kExit;
    end.code = uint64_t(WIFEXITED(status) ? WEXITSTATUS(status) : 0);
  }
  return end;
}

KernelResult AddKernelSamples(const std::string& output, const sampler::Recording& recording,
                              const KernelSettings& settings, const format::EndRecord* end) {
  KernelResult result;
  const auto& images = recording.images();
  uint32_t root_pid = images.empty() ? 0 : images.front()->pid;
  for (size_t i = 0; i < images.size(); ++i) {
    const auto& image = images[i];
    bool root = image->pid == root_pid;
    // The program's END: how it ended, or the exec that replaced this image.
    std::optional<format::EndRecord> image_end;
    if (end) image_end = *end;
    for (size_t k = i + 1; k < images.size(); ++k)
      if (images[k]->pid == root_pid) {
        image_end = format::EndRecord{images[k]->start_time, format::EndHow::kExec, 0};
        break;
      }
    if (image->execs > 0 && !settings.follow_exec) {
      result.samples_not_followed += image->samples;
      continue;
    }
    if (!root && !image->ended) {
      // Its runtime may still be writing its profile.
      result.samples_still_running += image->samples;
      continue;
    }
    if (!root && image->samples == 0) continue;
    bool exists = false;
    std::string path = ProfileFor(output, *image, root_pid, &exists);
    if (!root && !exists && settings.runtime) {
      result.samples_short_children += image->samples;
      continue;
    }
    // A child's END comes only from its runtime: how it ended is its parent's to know.
    Status added =
        AddImage(path, exists, *image, settings, root && image_end ? &*image_end : nullptr);
    if (!added.ok() && result.status.ok()) result.status = added;
  }
  return result;
}

}  // namespace hotline::cli

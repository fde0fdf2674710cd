#include "record/profiles.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "base/clock.h"
#include "format/raw_profile.h"
#include "format/writer.h"

namespace hotline::record {
namespace {

// BASE.PID[.N].hotline files beside `output` whose process is `pid`, with their process records,
// oldest first.
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

// The profile the runtime wrote for `image`; "" when it wrote none.
std::string RuntimeProfileOf(const std::string& output, const sampler::SampledImage& image) {
  uint32_t execs_seen = 0;
  for (const Candidate& c : ProfilesOf(output, image.pid)) {
    bool exec_image = c.process.flags & format::kExecImage;
    if (!exec_image && image.execs == 0) return c.path;
    if (exec_image && ++execs_seen == image.execs) return c.path;
  }
  return "";
}

format::EndRecord EndFromWaitStatus(int status, uint64_t time) {
  format::EndRecord end;
  end.time = time;
  if (WIFSIGNALED(status)) {
    end.how = format::EndHow::kSignal;
    end.code = uint64_t(WTERMSIG(status));
  } else {
    end.how = format::EndHow::kExit;
    end.code = uint64_t(WIFEXITED(status) ? WEXITSTATUS(status) : 0);
  }
  return end;
}

Status AppendEnd(int fd, const format::EndRecord& end) {
  format::Writer tail;
  tail.beginAppend(fd);
  tail.add(end);
  errno = 0;
  if (!tail.flush()) return Status::Error(errno ? strerror(errno) : tail.error());
  return Status();
}

}  // namespace

std::string ProfileBase(const std::string& output) {
  return output.ends_with(".hotline") ? output.substr(0, output.size() - 8) : output;
}

std::vector<std::string> ChildProfilePaths(const std::string& output, uint32_t pid) {
  // Compared by file name: `output` may be a bare name ("p.hotline") or have any directory.
  std::string prefix = std::filesystem::path(ProfileBase(output)).filename().string() + "." +
                       (pid ? std::to_string(pid) + "." : "");
  std::string dir = std::filesystem::path(output).parent_path().string();
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir.empty() ? "." : dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !name.ends_with(".hotline")) continue;
    // BASE.PID.hotline or BASE.PID.N.hotline: after the prefix comes the PID (a digit), or, when
    // the PID is in the prefix, "hotline" or N (a digit). BASE.hotline itself is not a child's.
    std::string rest = name.substr(prefix.size());
    if (!rest.empty() &&
        (std::isdigit(static_cast<unsigned char>(rest[0])) || (pid && rest == "hotline")))
      found.push_back(dir.empty() ? name : dir + "/" + name);
  }
  std::sort(found.begin(), found.end());
  return found;
}

Expected<int> CreateProfile(std::string* path, uint64_t features, bool exclusive) {
  int fd = -1;
  if (!exclusive) {
    fd = open(path->c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  } else {
    // BASE.PID.hotline, or BASE.PID.N.hotline when a process of that pid left one already.
    std::string base = *path;
    for (int n = 0; n < 1000 && fd < 0; ++n) {
      *path = base + (n ? "." + std::to_string(n) : std::string()) + ".hotline";
      fd = open(path->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
      if (fd < 0 && errno != EEXIST) break;
    }
  }
  if (fd < 0) return Status::Error("cannot write the profile " + *path + ": " + strerror(errno));
  format::Writer header;
  errno = 0;
  if (!header.begin(fd, features)) {
    std::string why = errno ? strerror(errno) : header.error();
    close(fd);
    return Status::Error("cannot write the profile " + *path + ": " + why);
  }
  return fd;
}

Status WriteProcessRecord(int fd, const sampler::SampledImage& image,
                          const ProfileSettings& settings) {
  format::Writer head;
  head.beginAppend(fd);
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
  r.sampler = settings.sampler;
  r.period_ns = settings.period_ns;
  r.max_depth = settings.max_depth;
  r.flags = (image.forked ? uint64_t(format::kForkedChild) : 0) |
            (image.execs ? uint64_t(format::kExecImage) : 0) |
            (settings.start_paused && !image.forked && image.execs == 0
                 ? uint64_t(format::kStartedPaused)
                 : 0);
  head.add(r);
  errno = 0;
  if (!head.flush()) return Status::Error(errno ? strerror(errno) : head.error());
  return Status();
}

ProfileFiles::ProfileFiles(std::string output, int output_fd, ProfileSettings settings,
                           sampler::Recording& recording)
    : output_(std::move(output)), settings_(settings), recording_(recording) {
  Entry& root = entry(0);
  root.state = State::kAttached;
  root.path = output_;
  root.fd = output_fd;
  root.ours = !settings_.runtime;
}

ProfileFiles::~ProfileFiles() {
  for (size_t i = 1; i < entries_.size(); ++i)
    if (entries_[i].fd >= 0) close(entries_[i].fd);
}

ProfileFiles::Entry& ProfileFiles::entry(size_t index) {
  if (entries_.size() <= index) entries_.resize(index + 1);
  return entries_[index];
}

Status ProfileFiles::attach(size_t index, const std::string& path, int fd, bool ours) {
  Entry& e = entry(index);
  e.path = path;
  e.fd = fd;
  e.ours = ours;
  e.state = State::kAttached;
  Status attached = recording_.attachFile(*recording_.images()[index], fd);
  if (!attached.ok()) return Status::Error("cannot write the profile " + path + ": " +
                                           attached.message());
  return Status();
}

namespace {
// A program executed without --follow-exec is not followed, nor is what it forks.
bool NotFollowed(const sampler::SampledImage& image, bool follow_exec) {
  if (follow_exec) return false;
  for (const sampler::SampledImage* i = &image; i; i = i->parent)
    if (i->execs > 0) return true;
  return false;
}
}  // namespace

void ProfileFiles::place(size_t index, bool final) {
  Entry& e = entry(index);
  if (e.state != State::kWaiting) return;
  const sampler::SampledImage& image = *recording_.images()[index];
  if (NotFollowed(image, settings_.follow_exec)) {
    // Its samples go nowhere; counted once the run is over.
    if (final) {
      result_.samples_not_followed += image.samples;
      e.state = State::kDropped;
    }
    return;
  }
  Status placed;
  if (settings_.runtime) {
    // The runtime's profile is complete once its process has ended.
    if (!image.ended && !final) return;
    if (!image.ended) {
      result_.samples_still_running += image.samples;
      e.state = State::kDropped;
      return;
    }
    std::string path = RuntimeProfileOf(output_, image);
    if (!path.empty()) {
      int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
      placed = fd < 0 ? Status::Error("cannot write the profile " + path + ": " + strerror(errno))
                      : attach(index, path, fd, false);
    }
  }
  // No runtime wrote this image's profile (there is none in it, or it did not reach this one:
  // a static program, posix_spawn or an exec with an environment of the program's own).
  if (placed.ok() && entry(index).state == State::kWaiting) {
    // No runtime: the recorder's own profile, once the image has run for more than a sample's
    // time. The kernel's clock often samples a child at its exit, with a whole period's weight,
    // though it ran for much less: such a child is counted, not filed, as the runtime does.
    bool enough = image.samples >= 2 ||
                  (image.samples == 1 && (image.ended ? image.cpu_ns >= settings_.period_ns : final));
    if (!enough) {
      if (!final && !image.ended) return;
      if (image.ended && image.samples == 0 && !final) return;
      result_.samples_short_children += image.samples;
      e.state = State::kDropped;
      return;
    }
    std::string path = ProfileBase(output_) + "." + std::to_string(image.pid);
    Expected<int> fd = CreateProfile(&path, settings_.features, true);
    if (!fd.ok()) {
      placed = fd.status();
    } else {
      placed = WriteProcessRecord(*fd, image, settings_);
      if (placed.ok()) placed = attach(index, path, *fd, true);
      if (!placed.ok()) placed = Status::Error("cannot write the profile " + path + ": " +
                                               placed.message());
      entry(index).fd = *fd;
    }
  }
  if (!placed.ok()) {
    entry(index).state = State::kDropped;
    if (result_.status.ok()) result_.status = placed;
  }
}

void ProfileFiles::update() {
  for (size_t i = 1; i < recording_.images().size(); ++i) place(i, false);
}

ProfilesResult ProfileFiles::finish(const format::EndRecord* end) {
  const auto& images = recording_.images();
  for (size_t i = 1; i < images.size(); ++i) place(i, true);
  if (!images.empty() && recording_.images()[0]->file_fd < 0 && result_.status.ok())
    result_.status = Status::Error("cannot write the profile " + output_);
  uint32_t root_pid = images.empty() ? 0 : images.front()->pid;
  // The children that left no profile of their own, for the first one's STATS.
  std::map<uint32_t, std::pair<bool, uint64_t>> children;  // pid → (has a profile, CPU ns)
  for (size_t i = 0; i < images.size(); ++i) {
    const sampler::SampledImage& image = *images[i];
    if (image.pid == root_pid) continue;
    auto& [filed, cpu_ns] = children[image.pid];
    filed |= entry(i).state == State::kAttached;
    cpu_ns += image.cpu_ns;
  }
  for (size_t i = 0; i < images.size(); ++i) {
    Entry& e = entry(i);
    if (e.state != State::kAttached) continue;
    const sampler::SampledImage& image = *images[i];
    // How this image ended: replaced by the next image of its process, or as the process did.
    std::optional<format::EndRecord> image_end;
    for (size_t k = i + 1; k < images.size() && !image_end; ++k)
      if (images[k]->pid == image.pid)
        image_end = format::EndRecord{images[k]->start_time, format::EndHow::kExec, 0};
    if (!image_end && image.pid == root_pid && end) image_end = *end;
    if (!image_end && image.pid != root_pid && image.ended) {
      uint64_t time = ClockNs(CLOCK_MONOTONIC);
      image_end = image.exit_status >= 0 ? EndFromWaitStatus(image.exit_status, time)
                                         : format::EndRecord{time, format::EndHow::kEnded, 0};
    }
    // The runtime's END stands when it agrees with how the process really ended: a return
    // from main reaches exit() inside libc, past the runtime, which then records code 0.
    if (image_end && !e.ours) {
      Expected<format::RawProfile> profile = format::LoadRawProfile(e.path, nullptr);
      auto killed = [](const format::EndRecord& x) { return x.how == format::EndHow::kSignal; };
      bool exact = image_end->how == format::EndHow::kExit || killed(*image_end);
      if (profile.ok() && profile->end &&
          (!exact || (killed(*profile->end) == killed(*image_end) &&
                      profile->end->code == image_end->code)))
        image_end.reset();
    }
    if (i == 0 && e.ours) {
      uint64_t count = 0, cpu_ns = 0;
      for (const auto& [pid, child] : children)
        if (!child.first) ++count, cpu_ns += child.second;
      recording_.addStats(image, {{"children_without_profile", count},
                                  {"children_without_profile_cpu_ns", cpu_ns}});
    }
    if (!image_end) continue;
    Status appended = AppendEnd(e.fd, *image_end);
    if (!appended.ok() && result_.status.ok())
      result_.status = Status::Error("cannot write the profile " + e.path + ": " +
                                     appended.message());
  }
  return result_;
}

std::vector<std::string> ProfileFiles::written() const {
  std::vector<std::string> paths;
  for (const Entry& e : entries_)
    if (e.state == State::kAttached) paths.push_back(e.path);
  return paths;
}

}  // namespace hotline::record

// The one place where a process's profile is finished (DESIGN.md, "Pipeline"). Under the kernel
// sampler every image (a process as started or forked, and each program it executes) has a
// stream of the recorder's; ProfileFiles sends each into its image's profile as soon as that
// file is known, and ends every profile after the run. An image without the runtime gets a
// profile of the recorder's own, made when its first sample arrives; an image with the runtime
// gets its stream after the runtime's records once the runtime has made its file.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "format/schema.h"
#include "sampler/recording.h"

namespace hotline::record {

// `output` without its ".hotline": the BASE of BASE.PID[.N].hotline, the profiles of the run's
// other processes and programs.
std::string ProfileBase(const std::string& output);

// The BASE.PID[.N].hotline files beside `output`: of process `pid`, or of any process when 0.
std::vector<std::string> ChildProfilePaths(const std::string& output, uint32_t pid);

// What a profile the recorder writes says about how it was recorded.
struct ProfileSettings {
  uint64_t period_ns = 0;
  uint32_t max_depth = 0;
  format::ClockMode clock = format::ClockMode::kCpu;
  uint64_t features = format::kFeatureSamples;
  format::Sampler sampler = format::Sampler::kKernelRecorder;
  bool follow_exec = false;
  bool start_paused = false;
  // The runtime is in the program's processes: such an image's profile is the runtime's, which
  // it begins once it has something to record; the few samples the kernel takes of a child's
  // exit do not make one.
  bool runtime = false;
};

// Creates (or empties) `path` with the file header, or makes a new BASE.PID[.N].hotline when
// `exclusive` (*path is then the name taken). Returns a descriptor open for appending.
Expected<int> CreateProfile(std::string* path, uint64_t features, bool exclusive);

// Writes the PROCESS record of `image` into the profile at `fd` (one of the recorder's own).
Status WriteProcessRecord(int fd, const sampler::SampledImage& image,
                          const ProfileSettings& settings);

// What the user should know about the samples that went into no profile.
struct ProfilesResult {
  Status status;  // the first profile that could not be written, and why
  uint64_t samples_not_followed = 0;    // of programs executed without --follow-exec
  uint64_t samples_still_running = 0;   // of processes still running when the program ended
  uint64_t samples_short_children = 0;  // of children too short for a profile of their own
};

class ProfileFiles {
 public:
  // `output` is the first image's profile, open for appending at `output_fd` (the recording
  // already writes into it).
  ProfileFiles(std::string output, int output_fd, ProfileSettings settings,
               sampler::Recording& recording);
  ~ProfileFiles();
  ProfileFiles(const ProfileFiles&) = delete;
  ProfileFiles& operator=(const ProfileFiles&) = delete;

  // Sends the streams whose profile is now known into it (call after each Recording::pump).
  void update();
  // After Recording::finish(): every stream into its profile or counted, and every profile its
  // END. `end` is how the first process ended (none when not known, as for a process hotline
  // attached to and left running); `stats` (the children that left no profile) go into the
  // first profile when the runtime does not write them.
  ProfilesResult finish(const format::EndRecord* end);
  // The profiles written, the first one first.
  std::vector<std::string> written() const;

 private:
  enum class State { kWaiting, kAttached, kDropped };
  struct Entry {
    State state = State::kWaiting;
    std::string path;
    int fd = -1;
    bool ours = false;  // made by the recorder (no runtime wrote it)
  };
  void place(size_t index, bool final);
  Status attach(size_t index, const std::string& path, int fd, bool ours);
  Entry& entry(size_t index);

  std::string output_;
  ProfileSettings settings_;
  sampler::Recording& recording_;
  std::vector<Entry> entries_;  // parallel to recording_.images()
  ProfilesResult result_;
};

}  // namespace hotline::record

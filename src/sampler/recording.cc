#include "sampler/recording.h"

#include <fcntl.h>
#include <gelf.h>
#include <poll.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "base/address_space.h"
#include "base/clock.h"

namespace hotline::sampler {
namespace {
constexpr uint32_t kProtExec = 4;
// How often what goes into a profile is written (Recording::pump).
constexpr uint64_t kAttachedFlushNs = 250'000'000;
}  // namespace

uint64_t LoadBias(const PerfMapping& m) {
  uint64_t bias = m.address - m.file_offset;
  int fd = open(m.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return bias;
  elf_version(EV_CURRENT);
  if (Elf* elf = elf_begin(fd, ELF_C_READ, nullptr)) {
    size_t count = 0;
    if (elf_getphdrnum(elf, &count) == 0) {
      for (size_t i = 0; i < count; ++i) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, int(i), &ph) && ph.p_type == PT_LOAD &&
            ph.p_offset <= m.file_offset && m.file_offset < ph.p_offset + ph.p_filesz)
          bias = m.address - m.file_offset - (ph.p_vaddr - ph.p_offset);
      }
    }
    elf_end(elf);
  }
  close(fd);
  return bias;
}

// An image's stream and what it needs while being written.
struct Recording::Stream {
  SampledImage* image = nullptr;
  format::Writer writer;
  uint64_t next_module = format::kAppendedIdBase;
  std::vector<std::pair<PerfMapping, uint64_t>> modules;  // with their load bias
};

namespace {

int ScratchFile(const std::string& dir) {
  int fd = open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  std::string path = dir + "/.hotline-samples-XXXXXX";
  fd = mkostemp(path.data(), O_CLOEXEC);
  if (fd >= 0) unlink(path.c_str());
  return fd;
}

// A thread's state and its process's parent, from /proc/PID/task/TID/stat.
struct TaskStat {
  char state = '?';  // R running, S sleeping, D in uninterruptible sleep, ... ('?' when gone)
  uint32_t ppid = 0;
};

TaskStat ReadTaskStat(uint32_t pid, uint32_t tid) {
  TaskStat stat;
  std::string path = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat";
  FILE* file = fopen(path.c_str(), "re");
  if (!file) return stat;
  char text[1024];
  size_t n = fread(text, 1, sizeof text - 1, file);
  fclose(file);
  text[n] = '\0';
  // "tid (name) state ppid ...": the name may hold anything; it ends at the last ')'.
  if (const char* close = strrchr(text, ')')) sscanf(close + 1, " %c %u", &stat.state, &stat.ppid);
  return stat;
}

// How process `pid` ended, as waitpid would tell its parent: the kernel keeps it in
// /proc/PID/stat (its 52nd field) from the process's exit until its parent reaps it. -1 when
// it is gone already.
int ExitStatusOf(uint32_t pid) {
  FILE* file = fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "re");
  if (!file) return -1;
  char text[2048];
  size_t n = fread(text, 1, sizeof text - 1, file);
  fclose(file);
  text[n] = '\0';
  const char* p = strrchr(text, ')');
  if (!p) return -1;
  // Fields 3 (the state) to 52 (the exit code) follow the name.
  int field = 2;
  long value = -1;
  for (char *save = nullptr, *word = strtok_r(const_cast<char*>(p + 1), " \n", &save); word;
       word = strtok_r(nullptr, " \n", &save)) {
    if (++field == 52) {
      value = strtol(word, nullptr, 10);
      break;
    }
  }
  return value >= 0 && value <= 0xffff ? int(value) : -1;
}

std::vector<std::string> CommandLine(uint32_t pid) {
  std::vector<std::string> argv;
  int fd = open(("/proc/" + std::to_string(pid) + "/cmdline").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return argv;
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, size_t(n));
  close(fd);
  for (size_t at = 0; at < text.size();) {
    size_t nul = text.find('\0', at);
    if (nul == std::string::npos) nul = text.size();
    argv.push_back(text.substr(at, nul - at));
    at = nul + 1;
  }
  return argv;
}

// Data pages per CPU ring for `freq_hz` samples of `stack_bytes` each: about 100 ms of samples,
// so that a recorder kept from its rings for a while (a busy machine) loses none. An
// unprivileged user may lock 516 KiB per CPU (perf_event_mlock_kb): 128 pages, 6 ms at 10 kHz;
// root may lock more.
uint32_t RingPages(uint32_t freq_hz, uint32_t stack_bytes) {
  constexpr uint32_t kUnprivileged = 128, kMost = 4096;
  if (geteuid() != 0) return kUnprivileged;
  uint64_t bytes = uint64_t(freq_hz) * (stack_bytes + 512) / 10;
  uint32_t pages = kUnprivileged;
  while (uint64_t(pages) * 4096 < bytes && pages < kMost) pages *= 2;
  return pages;
}

}  // namespace

Recording::Recording() = default;

Recording::~Recording() {
  for (auto& image : images_)
    if (image->stream_fd >= 0) close(image->stream_fd);
}

Status Recording::start(pid_t pid, const std::string& exe, const std::vector<std::string>& argv,
                        const RecordingOptions& options, int profile_fd) {
  options_ = options;
  root_pid_ = uint32_t(pid);
  period_ns_ = 1'000'000'000u / (options.freq_hz ? options.freq_hz : 1000);
  Stream* root = addImage(root_pid_, uint32_t(getpid()), 0, false, profile_fd);
  if (!root) return Status::Error("cannot create a scratch file in " + options.scratch_dir);
  root->image->exe = exe;
  root->image->argv = argv;
  PerfOptions perf;
  perf.freq_hz = options.freq_hz;
  perf.stack_bytes = options.stack_bytes;
  perf.ring_pages = RingPages(options.freq_hz, options.stack_bytes);
  perf.enable_on_exec = true;
  perf.context_switches = options.wall_clock;
  return perf_.open(pid, perf);
}

Status Recording::attach(pid_t pid, const RecordingOptions& options, int profile_fd) {
  options_ = options;
  root_pid_ = uint32_t(pid);
  attached_ = true;
  period_ns_ = 1'000'000'000u / (options.freq_hz ? options.freq_hz : 1000);
  std::string proc = "/proc/" + std::to_string(pid);
  uint64_t now = ClockNs(CLOCK_MONOTONIC);
  Stream* root =
      addImage(root_pid_, ReadTaskStat(root_pid_, root_pid_).ppid, now, false, profile_fd);
  if (!root) return Status::Error("cannot create a scratch file in " + options.scratch_dir);
  char exe[4096];
  ssize_t length = readlink((proc + "/exe").c_str(), exe, sizeof exe - 1);
  root->image->exe = length > 0 ? std::string(exe, size_t(length)) : std::string();
  root->image->argv = CommandLine(uint32_t(pid));
  PerfOptions perf;
  perf.freq_hz = options.freq_hz;
  perf.stack_bytes = options.stack_bytes;
  perf.ring_pages = RingPages(options.freq_hz, options.stack_bytes);
  perf.context_switches = options.wall_clock;
  if (Status opened = perf_.attach(pid, perf); !opened.ok()) return opened;
  // What the process had mapped and which threads it had before the events began.
  if (FILE* maps = fopen((proc + "/maps").c_str(), "re")) {
    char line[4096 + 128];
    while (fgets(line, sizeof line, maps)) {
      unsigned long long start = 0, end = 0, offset = 0;
      char perms[8] = {}, path[4096] = {};
      if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &start, &end, perms, &offset,
                 path) < 5 ||
          perms[2] != 'x' || (path[0] != '/' && std::strcmp(path, kVdso) != 0))
        continue;
      PerfMapping m;
      m.pid = m.tid = root_pid_;
      m.time = now;
      m.address = start;
      m.length = end - start;
      m.file_offset = offset;
      m.prot = kProtExec | 1;
      m.path = path;
      onMapping(m);
    }
    fclose(maps);
  }
  for (pid_t tid : PerfRecorder::Threads(pid)) {
    char name[64] = {};
    if (FILE* comm = fopen((proc + "/task/" + std::to_string(tid) + "/comm").c_str(), "re")) {
      if (fgets(name, sizeof name, comm)) name[strcspn(name, "\n")] = '\0';
      fclose(comm);
    }
    Thread& thread = threads_[uint32_t(tid)];
    thread.pid = root_pid_;
    thread.last_stream = thread.started_in = root;
    // Its time counts from now: on a CPU from now, or from its next switch in.
    bool running = ReadTaskStat(root_pid_, uint32_t(tid)).state == 'R';
    thread.on_since = running ? now : 0;
    thread.counted = true;
    // Wall clock: a thread blocked now waits from now on.
    if (options.wall_clock && !running) thread.off_since = now;
    root->writer.add(format::ThreadStartRecord{now, uint64_t(tid), root->writer.internString(name),
                                               uint64_t(format::kThreadPreexisting)});
  }
  captureWaits();
  return Status();
}

Recording::Stream* Recording::addImage(uint32_t pid, uint32_t ppid, uint64_t time, bool forked,
                                       int profile_fd) {
  int fd = profile_fd >= 0 ? profile_fd : ScratchFile(options_.scratch_dir);
  if (fd < 0) return nullptr;
  auto image = std::make_unique<SampledImage>();
  image->pid = pid;
  image->ppid = ppid;
  image->forked = forked;
  image->start_time = time;
  (profile_fd >= 0 ? image->file_fd : image->stream_fd) = fd;
  std::vector<Stream*>& mine = by_pid_[pid];
  image->execs = mine.empty() ? 0 : mine.back()->image->execs + 1;
  auto stream = std::make_unique<Stream>();
  stream->image = image.get();
  stream->writer.beginAppend(fd, format::kAppendedIdBase);
  mine.push_back(stream.get());
  images_.push_back(std::move(image));
  streams_.push_back(std::move(stream));
  return streams_.back().get();
}

Recording::Stream* Recording::imageAt(uint32_t pid, uint64_t time) {
  auto it = by_pid_.find(pid);
  if (it == by_pid_.end() || it->second.empty()) return nullptr;
  // A sample read after its process's exec record may still be from before the exec.
  for (size_t i = it->second.size(); i-- > 1;)
    if (it->second[i]->image->start_time <= time) return it->second[i];
  return it->second.front();
}

void Recording::pump(int timeout_ms) {
  std::vector<pollfd> fds;
  for (int fd : perf_.descriptors()) fds.push_back(pollfd{fd, POLLIN, 0});
  poll(fds.data(), fds.size(), timeout_ms);
  perf_.drain(*this);
  captureWaits();
  // What goes into a profile is written within a quarter of a second, so that a recorder that
  // is killed loses little; a scratch stream only when it grows.
  uint64_t now = ClockNs(CLOCK_MONOTONIC);
  bool due = now - last_flush_ >= kAttachedFlushNs;
  for (auto& stream : streams_)
    if (stream->writer.pendingBytes() > (1u << 20) || (due && stream->image->file_fd >= 0))
      flushStream(*stream);
  if (due) last_flush_ = now;
}

void Recording::flushStream(Stream& stream) {
  if (stream.writer.failed()) return;
  errno = 0;
  if (!stream.writer.flush() && write_error_.ok())
    write_error_ = Status::Error(std::string(errno ? strerror(errno) : stream.writer.error()));
}

Status Recording::flushAttached() {
  for (auto& stream : streams_)
    if (stream->image->file_fd >= 0) flushStream(*stream);
  return write_error_;
}

Status Recording::attachFile(SampledImage& image, int profile_fd) {
  auto it = std::find_if(streams_.begin(), streams_.end(),
                         [&](const auto& stream) { return stream->image == &image; });
  if (it == streams_.end() || image.file_fd >= 0) return Status::Error("no such stream");
  Stream& stream = **it;
  flushStream(stream);
  if (!write_error_.ok()) return write_error_;
  // What waited in the scratch file, then the stream itself from now on.
  if (lseek(image.stream_fd, 0, SEEK_SET) != 0)
    return Status::Error(std::string("kernel samples: ") + strerror(errno));
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = read(image.stream_fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Error(std::string("kernel samples: ") + strerror(errno));
    if (n == 0) break;
    for (ssize_t done = 0; done < n;) {
      ssize_t w = write(profile_fd, buffer + done, size_t(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return Status::Error(strerror(w < 0 ? errno : ENOSPC));
      done += w;
    }
  }
  close(image.stream_fd);
  image.stream_fd = -1;
  image.file_fd = profile_fd;
  stream.writer.setFd(profile_fd);
  return Status();
}

Status Recording::addStats(const SampledImage& image,
                           const std::vector<std::pair<std::string, uint64_t>>& stats) {
  for (auto& stream : streams_) {
    if (stream->image != &image) continue;
    uint64_t now = ClockNs(CLOCK_MONOTONIC);
    for (const auto& [key, value] : stats)
      stream->writer.add(format::StatsRecord{now, stream->writer.internString(key.c_str()), value});
    flushStream(*stream);
  }
  return write_error_;
}

void Recording::noteSwitch(bool on, format::StateSource source) {
  if (streams_.empty()) return;
  Stream& root = *streams_.front();
  root.writer.add(format::StateRecord{ClockNs(CLOCK_MONOTONIC), 0, on ? 1u : 0u, source});
  flushStream(root);
}

Status Recording::finish() {
  perf_.drain(*this);
  // A child whose exit record never came (the kernel drops some under load) but that is gone
  // has ended all the same: how, its zombie's status says while there is one, else nobody knows.
  for (auto& [pid, streams] : by_pid_) {
    if (pid == root_pid_ || streams.empty() || streams.back()->image->ended) continue;
    char state = ReadTaskStat(pid, pid).state;
    if (state != '?' && state != 'Z' && state != 'X') continue;  // still running
    int status = state == '?' ? -1 : ExitStatusOf(pid);
    for (Stream* stream : streams) {
      stream->image->ended = true;
      stream->image->exit_status = status;
    }
  }
  for (auto& [tid, thread] : threads_)
    if (!thread.ended) endThread(tid, thread);
  perf_.close();
  for (auto& stream : streams_) {
    flushStream(*stream);
    if (stream->image->stream_fd >= 0) lseek(stream->image->stream_fd, 0, SEEK_SET);
  }
  return write_error_;
}

Recording::Thread& Recording::threadSeen(Stream& stream, uint32_t tid, uint64_t time) {
  Thread& thread = threads_[tid];
  thread.pid = stream.image->pid;
  if (thread.last_stream != &stream) thread.last_node = 0;  // a node of another stream
  thread.last_stream = &stream;
  if (thread.started_in != &stream) {
    thread.started_in = &stream;
    stream.writer.add(format::ThreadStartRecord{time, tid, 0, 0});
  }
  return thread;
}

// Its THREAD_END, with its CPU time.
void Recording::endThread(uint32_t tid, Thread& thread) {
  thread.ended = true;
  if (!thread.last_stream) return;
  uint64_t time = thread.exit_time ? thread.exit_time : ClockNs(CLOCK_MONOTONIC);
  leaveCpu(thread, time);  // still running as the recording ends (attached)
  if (thread.counted) thread.last_stream->image->cpu_ns += thread.cpu_ns;
  if (thread.off_since) addWait(tid, thread, time);  // blocked to the end
  thread.last_stream->writer.add(
      format::ThreadEndRecord{time, tid, thread.counted ? thread.cpu_ns : format::kCpuUnknown});
}

void Recording::onRecordsDone() {
  // Its switch records may come from another CPU's ring than its exit; all of them are older,
  // so read by the end of the drain that read the exit. The program's first thread ends in
  // finish().
  std::erase_if(exited_, [this](uint32_t tid) {
    if (tid == root_pid_) return false;
    endThread(tid, threads_[tid]);
    return true;
  });
}

void Recording::leaveCpu(Thread& thread, uint64_t time) {
  if (thread.on_since && time > thread.on_since) thread.cpu_ns += time - thread.on_since;
  thread.on_since = 0;
}

uint64_t Recording::weightOf(uint64_t ns) const {
  return ns >= period_ns_ ? (ns + period_ns_ / 2) / period_ns_ : 1;
}

// Wall clock: the time a thread waited, from `thread.off_since` to `until`, as samples of the
// stack it left its CPU with (the last one it was sampled with when the kernel gives none).
void Recording::addWait(uint32_t tid, Thread& thread, uint64_t until) {
  uint64_t since = thread.off_since;
  thread.off_since = 0;
  if (!thread.last_stream || until <= since) return;
  uint64_t& carried = remainders_[tid];
  uint64_t ns = until - since + carried;
  uint64_t weight = ns / period_ns_;
  carried = ns % period_ns_;
  uint64_t node =
      thread.wait_node_for == since && thread.wait_node ? thread.wait_node : thread.last_node;
  if (weight == 0 || !node) return;
  thread.last_stream->writer.add(format::SampleRecord{since, tid, node, weight, 0});
  ++thread.last_stream->image->samples;
}

void Recording::captureWaits() {
  if (!options_.wall_clock || perf_.switch_stacks()) return;
  for (auto& [tid, thread] : threads_) {
    if (!thread.off_since || thread.wait_node_for == thread.off_since || thread.exit_time ||
        !thread.last_stream)
      continue;
    thread.wait_node_for = thread.off_since;  // one look per wait
    thread.wait_node = blockedStack(thread.pid, tid, *thread.last_stream);
  }
}

// The stack thread `tid` is blocked with now: its system call's stack pointer and pc from
// /proc, the top of its stack read from its memory (allowed for hotline's own descendants and
// for processes it may trace), unwound like a sample's. 0 when it runs or cannot be read.
uint64_t Recording::blockedStack(uint32_t pid, uint32_t tid, Stream& stream) {
  std::string path = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/syscall";
  FILE* file = fopen(path.c_str(), "re");
  if (!file) return 0;
  long nr = -1;
  unsigned long long args[6], sp = 0, pc = 0;
  int fields = fscanf(file, "%ld %llx %llx %llx %llx %llx %llx %llx %llx", &nr, &args[0], &args[1],
                      &args[2], &args[3], &args[4], &args[5], &sp, &pc);
  fclose(file);
  if (fields != 9 || nr < 0) return 0;  // running, or not in a system call
  stack_copy_.resize(options_.stack_bytes);
  iovec local{stack_copy_.data(), stack_copy_.size()},
      remote{reinterpret_cast<void*>(sp), stack_copy_.size()};
  ssize_t got = process_vm_readv(pid_t(pid), &local, 1, &remote, 1, 0);
  if (got <= 0) return 0;
  PerfSample s;
  s.pid = pid;
  s.tid = tid;
  s.ip = pc;
  s.regs.valid = true;
  s.regs.ip = pc;
  s.regs.sp = sp;
  s.stack = std::span<const uint8_t>(stack_copy_.data(), size_t(got));
  UnwoundStack stack = unwinder_.unwind(s, options_.max_depth);
  uint64_t node = 0;
  for (size_t i = stack.frames.size(); i-- > 0;)
    node = stream.writer.internStackNode(node, stack.frames[i]);
  return node;
}

void Recording::onSample(const PerfSample& s) {
  Stream* stream = imageAt(s.pid, s.time);
  if (!stream) return;
  Thread& thread = threadSeen(*stream, s.tid, s.time);
  UnwoundStack stack = unwinder_.unwind(s, options_.max_depth);
  frames_.clear();
  // A sample in the kernel (a system call): the kernel on top of the user stack that made it.
  if (s.ip >= kKernelSpaceStart) frames_.push_back(s.ip);
  frames_.insert(frames_.end(), stack.frames.begin(), stack.frames.end());
  uint32_t flags = 0;
  if (stack.truncated) flags |= format::kSampleTruncated;
  if (stack.incomplete) flags |= format::kSampleBroken;
  if (!s.switch_out) {
    stream->image->stacks_truncated += stack.truncated;
    stream->image->stacks_past_copy += stack.past_copy;
    stream->image->stacks_broken += stack.incomplete;
  }
  // The frames shared with the thread's previous stack, from the root, keep their nodes.
  if (thread.path_stream != stream) {
    thread.path_frames.clear();
    thread.path_nodes.clear();
    thread.path_stream = stream;
  }
  size_t shared = 0, depth = frames_.size();
  while (shared < depth && shared < thread.path_frames.size() &&
         thread.path_frames[shared] == frames_[depth - 1 - shared])
    ++shared;
  thread.path_frames.resize(shared);
  thread.path_nodes.resize(shared);
  uint64_t node = shared ? thread.path_nodes[shared - 1] : 0;
  for (size_t i = depth - shared; i-- > 0;) {
    node = stream->writer.internStackNode(node, frames_[i]);
    thread.path_frames.push_back(frames_[i]);
    thread.path_nodes.push_back(node);
  }
  thread.last_node = node;
  if (s.switch_out) return;  // where the next wait began: weighed when it ends
  ++stream->image->samples;
  stream->writer.add(format::SampleRecord{s.time, s.tid, node, weightOf(s.period), flags});
}

void Recording::onSwitch(const PerfSwitch& w) {
  Thread& thread = threads_[w.tid];
  // A thread that waits before it runs a sampling period is known from its first switch.
  if (!thread.last_stream)
    if (Stream* stream = imageAt(w.pid, w.time)) threadSeen(*stream, w.tid, w.time);
  if (w.out) {
    leaveCpu(thread, w.time);
  } else {
    thread.on_since = w.time;
    thread.counted = true;
  }
  if (!options_.wall_clock) return;
  if (w.out) {
    thread.off_since = w.time;
  } else if (thread.off_since) {
    addWait(w.tid, thread, w.time);
  }
}

void Recording::onMapping(const PerfMapping& m) {
  unwinder_.onMapping(m);
  if (!(m.prot & kProtExec) || m.path.empty() || (m.path[0] != '/' && m.path != kVdso)) return;
  Stream* stream = imageAt(m.pid, m.time);
  if (!stream) return;
  // An exec'd program's first mapping is the program itself.
  if (stream->image->exe.empty() && m.path[0] == '/') stream->image->exe = m.path;
  addModule(*stream, m, LoadBias(m), m.time);
}

void Recording::addModule(Stream& stream, const PerfMapping& m, uint64_t bias, uint64_t time) {
  format::ModuleLoadRecord r;
  r.time = time;
  r.id = ++stream.next_module;
  r.path = stream.writer.internString(m.path.c_str());
  r.bias = bias;
  r.start = m.address;
  r.size = m.length;
  r.file_offset = m.file_offset;
  r.build_id = m.build_id.data();
  r.build_id_size = m.build_id.size();
  stream.writer.add(r);
  stream.modules.emplace_back(m, bias);
}

void Recording::onTask(const PerfTask& t) {
  unwinder_.onTask(t);
  if (t.exit) {
    auto it = threads_.find(t.tid);
    if (it == threads_.end()) return;
    it->second.exit_time = t.time;
    leaveCpu(it->second, t.time);
    exited_.push_back(t.tid);
    if (t.tid == t.pid) {
      int status = t.pid == root_pid_ && !attached_ ? -1 : ExitStatusOf(t.pid);
      for (Stream* stream : by_pid_[t.pid]) {
        stream->image->ended = true;
        stream->image->exit_status = status;
      }
    }
    return;
  }
  if (t.pid != t.ppid && !by_pid_.count(t.pid)) {
    // A forked process: an image of its own, with its parent's program and mappings.
    Stream* parent = imageAt(t.ppid, t.time);
    Stream* child = addImage(t.pid, t.ppid, t.time, true);
    if (!child) return;
    if (parent) {
      child->image->parent = parent->image;
      child->image->exe = parent->image->exe;
      child->image->argv = parent->image->argv;
      for (const auto& [m, bias] : parent->modules) addModule(*child, m, bias, t.time);
    }
  }
  if (Stream* stream = imageAt(t.pid, t.time)) threadSeen(*stream, t.tid, t.time);
}

void Recording::onComm(const PerfComm& c) {
  unwinder_.onComm(c);
  if (!by_pid_.count(c.pid)) return;
  if (!c.exec) {
    // A thread named itself (pthread_setname_np, prctl): its name from now on.
    if (Stream* stream = imageAt(c.pid, c.time)) {
      threadSeen(*stream, c.tid, c.time);
      stream->writer.add(
          format::ThreadNameRecord{c.time, c.tid, stream->writer.internString(c.name.c_str())});
    }
    return;
  }
  Stream* before = by_pid_[c.pid].back();
  // The first exec is the one that starts the program (the event waited for it).
  if (c.pid == root_pid_ && before->image->execs == 0 && before->modules.empty()) {
    before->image->start_time = c.time;
    // On its CPU, executing the program, as the events begin: its first switch is out.
    Thread& thread = threadSeen(*before, c.tid, c.time);
    thread.on_since = c.time;
    thread.counted = true;
    return;
  }
  Stream* after = addImage(c.pid, before->image->ppid, c.time, before->image->forked);
  if (!after) return;
  after->image->argv = CommandLine(c.pid);
  if (after->image->argv.empty()) after->image->argv.push_back(c.name);
  // Only its calling thread survives an exec: it goes on in the new image.
  threadSeen(*after, c.tid, c.time);
}

}  // namespace hotline::sampler

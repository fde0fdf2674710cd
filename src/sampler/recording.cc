#include "sampler/recording.h"

#include <fcntl.h>
#include <gelf.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>

namespace hotline::sampler {
namespace {
constexpr uint64_t kKernelSpaceStart = 0xffff800000000000ull;
constexpr uint32_t kProtExec = 4;
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

Status Recording::start(pid_t pid, const RecordingOptions& options, int stream_fd) {
  options_ = options;
  pid_ = uint32_t(pid);
  period_ns_ = 1'000'000'000u / (options.freq_hz ? options.freq_hz : 1000);
  writer_.beginAppend(stream_fd, format::kAppendedIdBase);
  PerfOptions perf;
  perf.freq_hz = options.freq_hz;
  perf.enable_on_exec = true;
  return perf_.open(pid, perf);
}

void Recording::pump(int timeout_ms) {
  std::vector<pollfd> fds;
  for (int fd : perf_.descriptors()) fds.push_back(pollfd{fd, POLLIN, 0});
  poll(fds.data(), fds.size(), timeout_ms);
  perf_.drain(*this);
  if (writer_.pendingBytes() > (1u << 20)) writer_.flush();
}

Status Recording::finish() {
  perf_.drain(*this);
  perf_.close();
  writer_.flush();
  if (writer_.failed()) return Status::Error(std::string("kernel samples: ") + writer_.error());
  return Status();
}

void Recording::threadSeen(uint32_t tid, uint64_t time) {
  if (!options_.write_threads) return;
  if (std::find(threads_seen_.begin(), threads_seen_.end(), tid) != threads_seen_.end()) return;
  threads_seen_.push_back(tid);
  writer_.add(format::ThreadStartRecord{time, tid, 0, 0});
}

void Recording::onSample(const PerfSample& s) {
  if (s.pid != pid_) {
    ++childrens_samples_;
    return;
  }
  ++samples_;
  threadSeen(s.tid, s.time);
  UnwoundStack stack = unwinder_.unwind(s, options_.max_depth);
  frames_.clear();
  // A sample in the kernel (a system call): the kernel on top of the user stack that made it.
  if (s.ip >= kKernelSpaceStart) frames_.push_back(s.ip);
  frames_.insert(frames_.end(), stack.frames.begin(), stack.frames.end());
  uint32_t flags = 0;
  if (stack.truncated) flags |= format::kSampleTruncated;
  if (stack.incomplete && stack.frames.size() <= 1) flags |= format::kSampleBroken;
  uint64_t node = 0;
  for (size_t i = frames_.size(); i-- > 0;) node = writer_.internStackNode(node, frames_[i]);
  uint64_t weight = s.period >= period_ns_ ? (s.period + period_ns_ / 2) / period_ns_ : 1;
  writer_.add(format::SampleRecord{s.time, s.tid, node, weight, flags});
}

void Recording::onMapping(const PerfMapping& m) {
  unwinder_.onMapping(m);
  if (m.pid != pid_ || !(m.prot & kProtExec) || m.path.empty() || m.path[0] != '/') return;
  format::ModuleLoadRecord r;
  r.time = 0;
  r.id = ++next_module_;
  r.path = writer_.internString(m.path.c_str());
  r.bias = LoadBias(m);
  r.start = m.address;
  r.size = m.length;
  r.file_offset = m.file_offset;
  writer_.add(r);
}

void Recording::onTask(const PerfTask& t) {
  unwinder_.onTask(t);
  if (!options_.write_threads || t.pid != pid_) return;
  if (t.exit) {
    writer_.add(format::ThreadEndRecord{t.time, t.tid, format::kCpuUnknown});
  } else {
    threadSeen(t.tid, t.time);
  }
}

void Recording::onComm(const PerfComm& c) { unwinder_.onComm(c); }

}  // namespace hotline::sampler

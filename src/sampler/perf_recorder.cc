#include "sampler/perf_recorder.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

namespace hotline::sampler {
namespace {

// The x86-64 user registers a sample carries (PERF_REG_X86_*): the general ones and ip; not
// flags or the segment registers, which no unwinder needs.
constexpr int kRegAx = 0, kRegBx = 1, kRegCx = 2, kRegDx = 3, kRegSi = 4, kRegDi = 5, kRegBp = 6,
              kRegSp = 7, kRegIp = 8, kRegR8 = 16;
constexpr uint64_t kRegsMask = ((uint64_t{1} << 9) - 1) | (uint64_t{0xff} << 16);

// Fields after the record's own, present on every non-sample record (sample_id_all), for our
// sample_type: pid and tid, time, cpu and a reserved word.
constexpr size_t kSampleIdBytes = 8 + 8 + 8;

int PerfEventOpen(perf_event_attr* attr, pid_t pid, int cpu) {
  return int(syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

// A bounds-checked reader over one record: every field read past the end fails, never reads.
class Fields {
 public:
  Fields(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool u32(uint32_t* v) { return take(v, 4); }
  bool u64(uint64_t* v) { return take(v, 8); }
  const uint8_t* bytes(size_t n) {
    if (n > size_ - used_) return nullptr;
    const uint8_t* p = data_ + used_;
    used_ += n;
    return p;
  }
  size_t left() const { return size_ - used_; }

 private:
  bool take(void* v, size_t n) {
    const uint8_t* p = bytes(n);
    if (!p) return false;
    std::memcpy(v, p, n);
    return true;
  }
  const uint8_t* data_;
  size_t size_;
  size_t used_ = 0;
};

// The time in the sample_id trailer `f` is left at (pid, tid, time, cpu, reserved).
uint64_t TrailerTime(Fields& f) {
  uint64_t time = 0;
  uint32_t skip = 0;
  f.u32(&skip);
  f.u32(&skip);
  f.u64(&time);
  return time;
}

// A NUL-terminated name in the first `size` bytes (perf pads names to 8 bytes).
std::string Name(const uint8_t* p, size_t size) {
  const void* nul = std::memchr(p, 0, size);
  return std::string(reinterpret_cast<const char*>(p),
                     nul ? size_t(static_cast<const uint8_t*>(nul) - p) : size);
}

void SetReg(UserRegs& r, int bit, uint64_t v) {
  switch (bit) {
    case kRegAx:
      r.ax = v;
      break;
    case kRegBx:
      r.bx = v;
      break;
    case kRegCx:
      r.cx = v;
      break;
    case kRegDx:
      r.dx = v;
      break;
    case kRegSi:
      r.si = v;
      break;
    case kRegDi:
      r.di = v;
      break;
    case kRegBp:
      r.bp = v;
      break;
    case kRegSp:
      r.sp = v;
      break;
    case kRegIp:
      r.ip = v;
      break;
    default: {
      uint64_t* high[] = {&r.r8, &r.r9, &r.r10, &r.r11, &r.r12, &r.r13, &r.r14, &r.r15};
      if (bit >= kRegR8 && bit < kRegR8 + 8) *high[bit - kRegR8] = v;
    }
  }
}

}  // namespace

PerfRecorder::~PerfRecorder() { close(); }

Status PerfRecorder::open(pid_t pid, const PerfOptions& options) {
  close();
  if (options.freq_hz == 0 || options.ring_pages == 0 ||
      (options.ring_pages & (options.ring_pages - 1)) != 0 || options.stack_bytes % 8 != 0)
    return Status::Error(
        "perf sampling: a rate above 0, a power-of-two ring and a stack size "
        "that is a multiple of 8 are needed");
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = 1'000'000'000u / options.freq_hz;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                     PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
  attr.sample_regs_user = kRegsMask;
  attr.sample_stack_user = options.stack_bytes;
  attr.mmap = 1;
  attr.mmap2 = 1;
  attr.build_id = 1;  // MMAP2 records carry the file's build-id (Linux 5.12 on)
  attr.comm = 1;
  attr.comm_exec = 1;
  attr.task = 1;
  attr.inherit = 1;
  // A thread's CPU time is the sum of its stretches on a CPU, from its switch records. Not
  // inherit_stat's count at its exit: with it, this kernel (6.18, perf record -s as well) drops
  // every record written through one CPU's events from some thread's exit on, with no LOST
  // record; 2,001 threads of 0.3 ms were recorded as 1,100-1,900 in 1 run of 10 under load.
  attr.context_switch = 1;
  attr.sample_id_all = 1;
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;
  attr.exclude_hv = 1;
  attr.disabled = options.enable_on_exec ? 1 : 0;
  attr.enable_on_exec = options.enable_on_exec ? 1 : 0;
  long page = sysconf(_SC_PAGESIZE);
  size_t mapped = size_t(page) * (1 + options.ring_pages);
  // Woken (poll) when a quarter of a ring is full.
  attr.watermark = 1;
  attr.wakeup_watermark = uint32_t(size_t(page) * options.ring_pages / 4);
  regs_mask_ = kRegsMask;
  // The kernel refuses to map the ring of an inherited event that follows a task on every CPU
  // (cpu = -1): one event per CPU, each with its ring.
  long cpus = sysconf(_SC_NPROCESSORS_CONF);
  for (int cpu = 0; cpu < cpus; ++cpu) {
    int fd = PerfEventOpen(&attr, pid, cpu);
    if (fd < 0 && errno == EINVAL && attr.build_id) {
      attr.build_id = 0;  // a kernel before 5.12: the symbolizer reads build-ids from the files
      fd = PerfEventOpen(&attr, pid, cpu);
    }
    if (fd < 0 && (errno == EACCES || errno == EPERM) && !attr.exclude_kernel) {
      attr.exclude_kernel = 1;  // not allowed to see kernel time: user time alone
      fd = PerfEventOpen(&attr, pid, cpu);
    }
    if (fd < 0 && (errno == ENODEV || errno == EINVAL) && cpu > 0) continue;  // CPU offline
    if (fd < 0) {
      int err = errno;
      close();
      return Status::Error("perf sampling of process " + std::to_string(pid) +
                           " refused: " + std::strerror(err));
    }
    void* base = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      close();
      return Status::Error(std::string("perf sampling: cannot map a ring: ") + std::strerror(err));
    }
    fds_.push_back(fd);
    rings_.push_back(Ring{base, mapped, cpu});
    if (options.context_switches) openSwitchSampling(attr, pid, cpu, fd);
  }
  switch_stacks_ = options.context_switches && !switch_fds_.empty();
  attr_ = attr;
  context_switches_ = options.context_switches;
  return Status();
}

Status PerfRecorder::attach(pid_t pid, const PerfOptions& options) {
  // The threads now: an event each (inherited by what they start), all into the first
  // thread's rings. Threads started meanwhile by a thread not yet followed are caught by
  // listing again.
  std::vector<pid_t> followed;
  for (int round = 0; round < 4; ++round) {
    std::vector<pid_t> threads = Threads(pid);
    if (threads.empty() && followed.empty())
      return Status::Error("process " + std::to_string(pid) + " not found");
    bool added = false;
    for (pid_t tid : threads) {
      if (std::find(followed.begin(), followed.end(), tid) != followed.end()) continue;
      if (followed.empty()) {
        PerfOptions first = options;
        first.enable_on_exec = false;
        if (Status opened = open(tid, first); !opened.ok()) return opened;
      } else {
        for (const Ring& ring : rings_) {
          int fd = PerfEventOpen(&attr_, tid, ring.cpu);
          if (fd < 0) continue;  // the thread ended meanwhile
          if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, fds_[size_t(&ring - rings_.data())]) != 0) {
            ::close(fd);
            continue;
          }
          thread_fds_.push_back(fd);
          if (context_switches_)
            openSwitchSampling(attr_, tid, ring.cpu, fds_[size_t(&ring - rings_.data())]);
        }
      }
      followed.push_back(tid);
      added = true;
    }
    if (!added) break;
  }
  return Status();
}

std::vector<pid_t> PerfRecorder::Threads(pid_t pid) {
  std::vector<pid_t> threads;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec))
    threads.push_back(pid_t(std::atoi(entry.path().filename().c_str())));
  // The process's first thread first: its events carry the rings.
  std::sort(threads.begin(), threads.end(),
            [pid](pid_t a, pid_t b) { return (a == pid) != (b == pid) ? a == pid : a < b; });
  return threads;
}

// A sample at every switch-out, into `ring_fd`'s ring. Only where the kernel lets a sampler see
// kernel-side events (the switch happens in the kernel): otherwise wall-clock mode makes do
// with the switch records.
void PerfRecorder::openSwitchSampling(const perf_event_attr& clock, pid_t pid, int cpu,
                                      int ring_fd) {
  if (cpu > 0 && switch_fds_.empty()) return;  // refused on the first CPU: refused everywhere
  perf_event_attr attr = clock;
  attr.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
  attr.sample_period = 1;
  attr.mmap = attr.mmap2 = attr.comm = attr.comm_exec = attr.task = 0;
  attr.context_switch = 0;
  attr.inherit_stat = 0;
  attr.watermark = 0;
  attr.wakeup_watermark = 0;
  attr.exclude_kernel = 0;
  int fd = PerfEventOpen(&attr, pid, cpu);
  if (fd < 0) return;
  if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring_fd) != 0) {
    ::close(fd);
    return;
  }
  switch_fds_.push_back(fd);
}

void PerfRecorder::close() {
  for (Ring& ring : rings_) munmap(ring.base, ring.mapped);
  for (int fd : fds_) ::close(fd);
  for (int fd : switch_fds_) ::close(fd);
  for (int fd : thread_fds_) ::close(fd);
  thread_fds_.clear();
  rings_.clear();
  fds_.clear();
  switch_fds_.clear();
}

void PerfRecorder::drain(PerfHandler& handler) {
  // The heads first: every record older than a sample read below is then read too, whichever
  // ring it is in.
  std::vector<uint64_t> heads;
  for (Ring& ring : rings_)
    heads.push_back(__atomic_load_n(&static_cast<perf_event_mmap_page*>(ring.base)->data_head,
                                    __ATOMIC_ACQUIRE));
  pending_.clear();
  for (size_t i = 0; i < rings_.size(); ++i)
    walk(rings_[i], heads[i], [this](const uint8_t* record, size_t size, bool sample) {
      if (sample) return;
      // sample_id_all puts the time 16 bytes before the end of every other record.
      uint64_t time = 0;
      if (size >= sizeof(perf_event_header) + 16) std::memcpy(&time, record + size - 16, 8);
      pending_.push_back(Pending{time, std::vector<uint8_t>(record, record + size)});
    });
  std::stable_sort(pending_.begin(), pending_.end(),
                   [](const Pending& a, const Pending& b) { return a.time < b.time; });
  for (const Pending& p : pending_) parse(p.bytes.data(), p.bytes.size(), handler);
  handler.onRecordsDone();
  for (size_t i = 0; i < rings_.size(); ++i) {
    walk(rings_[i], heads[i], [&](const uint8_t* record, size_t size, bool sample) {
      if (sample) parse(record, size, handler);
    });
    // The kernel reuses the space only after it sees data_tail (release).
    __atomic_store_n(&static_cast<perf_event_mmap_page*>(rings_[i].base)->data_tail, heads[i],
                     __ATOMIC_RELEASE);
  }
}

template <typename Visit>
void PerfRecorder::walk(Ring& ring, uint64_t head, Visit visit) {
  auto* meta = static_cast<perf_event_mmap_page*>(ring.base);
  long page = sysconf(_SC_PAGESIZE);
  uint64_t data_offset = meta->data_offset ? meta->data_offset : uint64_t(page);
  uint64_t data_size = meta->data_size ? meta->data_size : ring.mapped - size_t(page);
  const auto* data = static_cast<const uint8_t*>(ring.base) + data_offset;
  uint64_t tail = meta->data_tail;
  while (head - tail >= sizeof(perf_event_header)) {
    perf_event_header header;
    uint64_t at = tail % data_size;
    // Records are 8-byte aligned and the ring's size a multiple of 8: a header never wraps.
    std::memcpy(&header, data + at, sizeof header);
    if (header.size < sizeof header || header.size > head - tail) {
      ++malformed_;
      return;
    }
    const uint8_t* record = data + at;
    if (at + header.size > data_size) {  // wraps around the ring's end: make it whole
      scratch_.resize(header.size);
      size_t first = size_t(data_size - at);
      std::memcpy(scratch_.data(), data + at, first);
      std::memcpy(scratch_.data() + first, data, header.size - first);
      record = scratch_.data();
    }
    visit(record, header.size, header.type == PERF_RECORD_SAMPLE);
    tail += header.size;
  }
}

void PerfRecorder::parse(const uint8_t* record, size_t size, PerfHandler& handler) {
  perf_event_header header;
  std::memcpy(&header, record, sizeof header);
  Fields f(record + sizeof header, size - sizeof header);
  switch (header.type) {
    case PERF_RECORD_SAMPLE: {
      PerfSample s;
      uint32_t reserved = 0;
      uint64_t abi = 0, stack_size = 0;
      if (!f.u64(&s.ip) || !f.u32(&s.pid) || !f.u32(&s.tid) || !f.u64(&s.time) || !f.u32(&s.cpu) ||
          !f.u32(&reserved) || !f.u64(&s.period) || !f.u64(&abi)) {
        ++malformed_;
        return;
      }
      // The clock's period is at least 10 µs; a switch-out sample stands for one switch.
      s.switch_out = s.period == 1 && !switch_fds_.empty();
      if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
        s.regs.valid = true;
        for (int bit = 0; bit < 64; ++bit) {
          if (!(regs_mask_ & (uint64_t{1} << bit))) continue;
          uint64_t value = 0;
          if (!f.u64(&value)) {
            ++malformed_;
            return;
          }
          SetReg(s.regs, bit, value);
        }
      }
      if (!f.u64(&stack_size)) {
        ++malformed_;
        return;
      }
      if (stack_size > 0) {
        const uint8_t* stack = f.bytes(stack_size);
        uint64_t dynamic = 0;
        if (!stack || !f.u64(&dynamic)) {
          ++malformed_;
          return;
        }
        s.stack =
            std::span<const uint8_t>(stack, size_t(dynamic < stack_size ? dynamic : stack_size));
      }
      handler.onSample(s);
      return;
    }
    case PERF_RECORD_MMAP2: {
      PerfMapping m;
      uint32_t flags = 0;
      const uint8_t* file_id = nullptr;  // device and inode, or the build-id
      if (!f.u32(&m.pid) || !f.u32(&m.tid) || !f.u64(&m.address) || !f.u64(&m.length) ||
          !f.u64(&m.file_offset) || !(file_id = f.bytes(24)) || !f.u32(&m.prot) || !f.u32(&flags) ||
          f.left() < kSampleIdBytes) {
        ++malformed_;
        return;
      }
      // With build_id set the kernel gives the file's build-id: a size byte, 3 reserved, 20.
      if ((header.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) && file_id[0] <= 20)
        m.build_id.assign(file_id + 4, file_id + 4 + file_id[0]);
      size_t name_bytes = f.left() - kSampleIdBytes;
      m.path = Name(f.bytes(name_bytes), name_bytes);
      m.time = TrailerTime(f);
      handler.onMapping(m);
      return;
    }
    case PERF_RECORD_COMM: {
      PerfComm c;
      if (!f.u32(&c.pid) || !f.u32(&c.tid) || f.left() < kSampleIdBytes) {
        ++malformed_;
        return;
      }
      size_t name_bytes = f.left() - kSampleIdBytes;
      c.name = Name(f.bytes(name_bytes), name_bytes);
      c.time = TrailerTime(f);
      c.exec = (header.misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
      handler.onComm(c);
      return;
    }
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT: {
      PerfTask t;
      t.exit = header.type == PERF_RECORD_EXIT;
      if (!f.u32(&t.pid) || !f.u32(&t.ppid) || !f.u32(&t.tid) || !f.u32(&t.ptid) ||
          !f.u64(&t.time)) {
        ++malformed_;
        return;
      }
      handler.onTask(t);
      return;
    }
    case PERF_RECORD_SWITCH: {
      PerfSwitch w;
      w.out = (header.misc & PERF_RECORD_MISC_SWITCH_OUT) != 0;
      if (!f.u32(&w.pid) || !f.u32(&w.tid) || !f.u64(&w.time)) {
        ++malformed_;
        return;
      }
      handler.onSwitch(w);
      return;
    }
    case PERF_RECORD_LOST: {
      uint64_t id = 0, count = 0;
      if (f.u64(&id) && f.u64(&count)) lost_ += count;
      return;
    }
    default:
      return;  // throttling and the like: nothing to record
  }
}

}  // namespace hotline::sampler

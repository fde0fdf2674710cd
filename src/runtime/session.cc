#include "runtime/session.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

#include "runtime/descriptors.h"
#include "runtime/heap.h"
#include "runtime/modules.h"
#include "runtime/setxid.h"
#include "runtime/signals.h"
#include "runtime/threads.h"
#include "runtime/trace.h"
#include "runtime/unwind.h"
#include "runtime/watch.h"

namespace hotline::rt {

Session g_session;

namespace {

constexpr uint64_t kDrainIntervalNs = 25'000'000;  // the writer thread wakes this often
constexpr uint64_t kFlushIntervalNs = 75'000'000;  // so a SIGKILL loses at most ~100 ms
constexpr size_t kFlushBytes = 1u << 20;

alignas(format::Writer) unsigned char g_writer_storage[sizeof(format::Writer)];
pthread_key_t g_thread_key;
pid_t g_writer_tid = 0;
uint64_t g_writer_cpu_ns = 0;  // the writer thread's CPU time, kept when it ends

// The toggle signal's flips, each with its time and the state it left, written by the handler
// (NoteToggle) and turned into STATE records by the next round. A round may be far away when
// the session is threadless, so each flip is kept, not only the last: up to kFlips between two
// rounds (older ones are overwritten; the newest, which decide the state, are written).
constexpr uint64_t kFlips = 64;
struct Flip {
  std::atomic<uint64_t> serial{0};  // index + 1 once time and on are written
  std::atomic<uint64_t> time{0};
  std::atomic<uint32_t> on{0};
};
Flip g_flips[kFlips];
std::atomic<uint64_t> g_flips_noted{0};
uint64_t g_flips_written = 0;  // under the session lock

format::Writer& W() { return *g_session.writer; }

// Holds off, on the calling thread, the signals another process sends (everything but the
// faults, which must reach their handler at once, and glibc's own two), for as long as it lives.
// The kernel's call: the interposed one shows the program its own mask, which this leaves as
// the program set it once released.
class HoldSentSignals {
 public:
  HoldSentSignals() {
    unsigned long held = ~0ul;
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGKILL, SIGSTOP, 32, 33})
      held &= ~(1ul << (sig - 1));
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &held, &before_, sizeof held);
  }
  ~HoldSentSignals() {
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &before_, nullptr, sizeof before_);
  }
  HoldSentSignals(const HoldSentSignals&) = delete;
  HoldSentSignals& operator=(const HoldSentSignals&) = delete;

 private:
  unsigned long before_ = 0;
};

uint64_t Features() {
  uint64_t features = 0;
  if (g_session.config.sampling()) features |= format::kFeatureSamples;
  if (g_session.config.trace != format::TraceMode::kNone) features |= format::kFeatureTrace;
  if (g_session.config.heap) features |= format::kFeatureHeap;
  return features;
}

void ReadSmallFile(const char* path, char* buf, size_t size, size_t* len) {
  *len = 0;
  int fd = OpenOwned(path, O_RDONLY);
  if (fd < 0) return;
  while (*len < size) {
    ssize_t n = read(fd, buf + *len, size - *len);
    if (n <= 0) break;
    *len += size_t(n);
  }
  CloseOwnDescriptor(fd);
}

void WriteProcessLocked(uint64_t flags) {
  // Read once per image: a forked child has the same command line, and reading /proc again
  // would make every fork slower.
  static char cmdline[65536];
  static size_t len = 0;
  static bool known = false;
  if (!known) {
    ReadSmallFile("/proc/self/cmdline", cmdline, sizeof cmdline, &len);
    known = true;
  }
  uint64_t argv[256];
  uint64_t argc = 0;
  for (size_t i = 0; i < len && argc < 256;) {
    size_t end = i;
    while (end < len && cmdline[end] != '\0') ++end;
    argv[argc++] = W().internString(cmdline + i, end - i);
    i = end + 1;
  }
  timespec real;
  clock_gettime(CLOCK_REALTIME, &real);
  format::ProcessRecord r;
  r.pid = uint64_t(getpid());
  r.ppid = uint64_t(getppid());
  r.realtime_ns = uint64_t(real.tv_sec) * 1000000000u + uint64_t(real.tv_nsec);
  r.time = NowNs();
  r.exe = W().internString(ExecutablePath());
  r.argc = argc;
  r.argv = argv;
  r.clock = g_session.config.clock;
  r.sampler = g_session.sampler;
  r.period_ns = g_session.config.periodNs();
  r.unwinder = g_session.config.unwinder;
  r.max_depth = g_session.config.max_depth;
  r.flags = flags | (g_session.config.start_paused ? uint64_t(format::kStartedPaused) : 0);
  r.trace = CurrentTraceMode();
  r.trace_tick_ns_q32 = TraceTickNsQ32();
  W().add(r);
}

void ThreadStartLocked(pid_t tid, bool preexisting) {
  char path[64], name[64];
  size_t len;
  snprintf(path, sizeof path, "/proc/self/task/%d/comm", int(tid));
  ReadSmallFile(path, name, sizeof name - 1, &len);
  while (len > 0 && (name[len - 1] == '\n' || name[len - 1] == '\0')) --len;
  format::ThreadStartRecord r;
  r.time = NowNs();
  r.tid = uint64_t(tid);
  r.name = len ? W().internString(name, len) : 0;
  r.flags = preexisting ? uint64_t(format::kThreadPreexisting) : 0;
  W().add(r);
}

void DrainLocked() {
  for (ThreadSlot& s : UsedSlots()) {
    int state = s.state.load(std::memory_order_acquire);
    if (state != int(SlotState::kActive) && state != int(SlotState::kExited)) continue;
    while (const SampleEntry* e = s.ring.peek()) {
      uint64_t node = 0;
      for (uint32_t i = e->depth; i-- > 0;) node = W().internStackNode(node, e->frames[i]);
      W().add(format::SampleRecord{e->time, uint64_t(s.tid), node, e->weight, e->flags});
      ++g_session.samples;
      if (e->flags & format::kSampleBroken) ++g_session.stacks_broken;
      if (e->flags & format::kSampleTruncated) ++g_session.stacks_truncated;
      s.ring.pop();
    }
    if (state == int(SlotState::kExited)) s.state.store(int(SlotState::kFree));
  }
  uint64_t noted = g_flips_noted.load(std::memory_order_acquire);
  if (noted - g_flips_written > kFlips) g_flips_written = noted - kFlips;
  for (; g_flips_written < noted; ++g_flips_written) {
    const Flip& flip = g_flips[g_flips_written % kFlips];
    // Still being written by a handler that interrupted this thread or runs on another: next
    // round.
    if (flip.serial.load(std::memory_order_acquire) != g_flips_written + 1) break;
    W().add(format::StateRecord{flip.time.load(), 0, flip.on.load(), format::StateSource::kSignal});
  }
}

// The profile is opened for each write and closed after it: between writes the program has no
// descriptor of hotline's (a program that lists /proc/self/fd, or closes every descriptor, sees
// only its own). It is opened high, out of the way of the program's dup2 (descriptors.h). A
// write is one chunk appended in one system call.
bool WriteProfileLocked() {
  Session& s = g_session;
  if (s.path[0] == '\0') return false;
  int fd = OpenOwned(s.path, O_WRONLY | O_APPEND);
  if (fd < 0) return false;
  W().setFd(fd);
  bool ok = W().flush();
  W().setFd(-1);
  CloseOwnDescriptor(fd);
  return ok;
}

// Makes the profile file at s.path (its header, when the file is new), without keeping it open.
bool BeginProfileLocked(int fd) {
  Session& s = g_session;
  if (fd < 0) {
    s.path[0] = '\0';
    return false;
  }
  // The root image's file comes with its header (hotline record wrote it); a file of the
  // runtime's own begins with one.
  struct stat st;
  bool has_header = fstat(fd, &st) == 0 && st.st_size > 0;
  bool ok = has_header ? W().beginAppend(fd) : W().begin(fd, Features());
  W().setFd(-1);
  // A file of the runtime's own gets its name with its header in it (config.h).
  if (ok && s.path[0] == '\0') ok = NameProfileFile(s.config, fd, s.path, sizeof s.path);
  CloseOwnDescriptor(fd);
  if (!ok) s.path[0] = '\0';
  return ok;
}

// The kernel sampler's samples of a child join the child's profile; once it has run a sampling
// period of CPU time it has some, and the profile is best begun by the runtime (its threads'
// CPU times, how it ended).
bool KernelSampledLocked() {
  const Session& s = g_session;
  if (!s.config.kernel_sampler || !s.config.sampling()) return false;
  timespec cpu;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
  return uint64_t(cpu.tv_sec) * 1000000000ull + uint64_t(cpu.tv_nsec) >= s.config.periodNs();
}

bool ChildHasDataLocked() {
  const Session& s = g_session;
  return s.samples > 0 || s.child_has_events || s.config.heap || TraceHooksSeen() ||
         KernelSampledLocked();
}

void WriteChildPreambleLocked() {
  Session& s = g_session;
  s.preamble_pending = false;
  WriteProcessLocked(format::kForkedChild);
  ReemitModules(W(), NowNs());
  if (s.preamble_tid) ThreadStartLocked(s.preamble_tid, false);
  if (!s.enabled.load())
    W().add(
        format::StateRecord{NowNs(), uint64_t(s.preamble_tid), 0, format::StateSource::kStartup});
}

// A forked child's profile comes into being with its first data (see AfterForkChild). Returns
// false while there is nothing to write yet.
bool OpenPendingChildProfileLocked() {
  Session& s = g_session;
  if (!s.file_pending) return true;
  if (!ChildHasDataLocked()) return false;
  s.file_pending = false;
  if (!BeginProfileLocked(OpenProfileFile(s.config, false, s.path, sizeof s.path))) {
    s.enabled.store(false);  // nowhere to write: the child runs on unprofiled
    return false;
  }
  return true;
}

// The child ends (or execs) without having recorded anything: no profile, only a count.
void CountChildWithoutProfileLocked(uint64_t cpu_ns) {
  if (!g_session.shared) return;
  g_session.shared->children_without_profile.fetch_add(1);
  if (cpu_ns != format::kCpuUnknown)
    g_session.shared->children_without_profile_cpu_ns.fetch_add(cpu_ns);
}

void FlushLocked(bool force) {
  uint64_t now = NowNs();
  if (!force && W().pendingBytes() < kFlushBytes && now - g_session.last_flush < kFlushIntervalNs)
    return;
  if (!OpenPendingChildProfileLocked()) return;
  WriteProfileLocked();
  g_session.last_flush = now;
  if (W().failed()) {
    // Nowhere left to say why: stop sampling so the program runs on undisturbed.
    g_session.enabled.store(false);
  }
}

// One round of the writer's work, with the lock held (and the child's preamble written).
void WriterCycleLocked() {
  CheckModulesLocked();
  if (g_session.writer_running) g_session.threads_paused += WatchBlockedThreads();
  DrainTraceLocked(W(), false);
  DrainHeapLocked(W());
  DrainWatchesLocked(W());
  DrainLocked();
  FlushLocked(false);
}

// Whether something fills while the program runs that only a thread of the runtime's can empty
// in time: signal sampling's rings (filled in signal handlers), timed tracing's event buffers,
// the watchpoints' hit rings. The heap's rings are drained by the allocating threads
// themselves (WriteIfDue), call counts are written at the end, toggles are kept until written.
// Sampled by the kernel without the heap, nothing would do the rounds that keep the runtime's
// records (threads, modules) on disk should the program be killed: the writer stays.
bool NeedsWriterThread() {
  const Config& c = g_session.config;
  return (c.sampling() && !(c.kernel_sampler && c.heap)) || c.trace == format::TraceMode::kTimed ||
         (c.watch[0] != '\0' && g_session.rootImage());
}

// Without a writer thread, when the last round is this old (WriteIfDue).
std::atomic<uint64_t> g_last_round{0};

void* WriterMain(void*) {
  // For good: nothing this thread runs is the program's, down to glibc's frees at its exit.
  EnterRuntime();
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);  // the runtime's own mask, the sampling signal too
  g_writer_tid = GetTid();
  // Not LockSession(): a forked child's preamble waits for the first wake-up, so that a child
  // which ends at once never has to wait for it.
  EnterRuntime();
  pthread_mutex_lock(&g_session.lock);
  // Sampled from outside, the writer is sampled too: its time must show as the profiler's.
  if (g_session.config.kernel_sampler && !g_session.file_pending)
    W().add(format::ThreadStartRecord{NowNs(), uint64_t(g_writer_tid),
                                      W().internString("hotline writer"),
                                      uint64_t(format::kThreadRuntime)});
  while (!g_session.writer_stop.load() && Running()) {
    timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    uint64_t ns = uint64_t(until.tv_nsec) + kDrainIntervalNs;
    until.tv_sec += time_t(ns / 1000000000u);
    until.tv_nsec = long(ns % 1000000000u);
    pthread_cond_timedwait(&g_session.writer_wake, &g_session.lock, &until);
    if (g_session.writer_stop.load() || !Running()) break;
    if (g_session.preamble_pending) WriteChildPreambleLocked();
    WriterCycleLocked();
  }
  g_writer_cpu_ns = ThreadCpuNs(g_writer_tid);  // its own clock: always readable
  UnlockSession();
  return nullptr;
}

using PthreadCreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

// Starts the writer thread when the session needs one; otherwise the session stays threadless
// and the program's calls into the runtime do the writer's work (WriteIfDue).
void StartWriterThread(bool needed) {
  static auto real_create = reinterpret_cast<PthreadCreateFn>(dlsym(RTLD_NEXT, "pthread_create"));
  g_session.threadless.store(!needed);
  if (!needed) return;
  g_session.writer_stop.store(false);
  LibcSignals before = ReadLibcSignals();
  InRuntime guard;  // what glibc allocates for the thread is not the program's to count
  g_session.writer_running =
      real_create && real_create(&g_session.writer_thread, nullptr, WriterMain, nullptr) == 0;
  RestoreLibcSignals(before);
  if (!g_session.writer_running) RecordDisabled("could not start the writer thread");
}

// Stops the writer thread and waits for it. glibc ends the process when its last thread ends
// (the main thread may have left through pthread_exit); a writer still running would keep it
// alive for ever.
void StopWriterThread() {
  if (!g_session.writer_running || pthread_equal(pthread_self(), g_session.writer_thread)) return;
  LockSession();
  g_session.writer_stop.store(true);
  pthread_cond_signal(&g_session.writer_wake);
  UnlockSession();
  pthread_join(g_session.writer_thread, nullptr);
  g_session.writer_running = false;
}

void OnThreadExit(void* data) {
  auto* slot = static_cast<ThreadSlot*>(data);
  if (!slot || !Running()) return;
  InRuntime guard;
  pid_t tid = slot->tid;
  EndThreadTrace();
  EndThreadHeap();
  uint64_t cpu = ThreadCpuNs(tid);
  // Retired and ended under one lock: when the process is finishing meanwhile, FinishSession
  // writes this thread's end itself (the slot still active), and nothing is lost between.
  LockSession();
  if (Running()) {
    RetireSlot(slot);
    W().add(format::ThreadEndRecord{NowNs(), uint64_t(tid), cpu});
  }
  UnlockSession();
  // The program's last thread is leaving: the process ends with it (exit(0) from glibc, which
  // runs the runtime's destructor), once the writer is out of the way.
  if (g_session.live_threads.fetch_sub(1) == 1) StopWriterThread();
}

void RegisterPreexistingThreads(pid_t self) {
  // getdents64 rather than opendir, which allocates with what may be the program's malloc.
  int fd = OpenOwned("/proc/self/task", O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  alignas(8) char entries[4096];
  for (long n; (n = syscall(SYS_getdents64, fd, entries, sizeof entries)) > 0;) {
    for (long at = 0; at < n;) {
      const auto* entry = reinterpret_cast<const dirent64*>(entries + at);
      at += entry->d_reclen;
      pid_t tid = pid_t(atoi(entry->d_name));
      if (tid <= 0 || tid == self) continue;
      if (RegisterThread(tid, false)) RecordThreadStart(tid, true);
    }
  }
  CloseOwnDescriptor(fd);
}

void InitSync() {
  pthread_mutex_init(&g_session.lock, nullptr);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&g_session.writer_wake, &attr);
  pthread_condattr_destroy(&attr);
}

}  // namespace

namespace {
void WriteChildPreambleLocked();
}  // namespace

void LockSession() {
  EnterRuntime();
  pthread_mutex_lock(&g_session.lock);
  if (g_session.preamble_pending) WriteChildPreambleLocked();
}

void UnlockSession() {
  pthread_mutex_unlock(&g_session.lock);
  LeaveRuntime();
}

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

void RegisterCurrentThread() {
  if (!Running()) return;
  ThreadSlot* slot = RegisterThread(GetTid(), true);
  if (!slot) {
    g_session.live_threads.fetch_sub(1);  // counted by its creator; it leaves no trace to end
    RecordDisabled("out of thread slots: a thread is not sampled");
    return;
  }
  pthread_setspecific(g_thread_key, slot);
  RecordThreadStart(slot->tid, false);
}

void StartSession() {
  Session& s = g_session;
  ReadConfig(&s.config);
  if (!s.config.active) return;
  s.pid = getpid();
  PrepareEnvironmentForChildren(s.config);
  int fd = OpenProfileFile(s.config, s.rootImage(), s.path, sizeof s.path);
  if (fd < 0) return;  // nowhere to write, not even why: stay off
  InitSync();
  if (s.rootImage()) {
    void* page = mmap(nullptr, sizeof(SharedCounters), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page != MAP_FAILED) s.shared = new (page) SharedCounters();
  }
  s.writer = new (g_writer_storage) format::Writer();
  InitTrace(s.config.trace);
  if (!BeginProfileLocked(fd)) return;
  LocateRuntimeImages();
  // libunwind opens its memory-validation pipe here: see pipe2 in interpose.cc
  // The in-process sampler unwinds in its signal handler: libunwind must be ready before the
  // first signal. The heap's walker needs it only where the walker gives up (heap.cc).
  if (s.config.sampling() && !s.config.kernel_sampler) InitUnwinder();
  s.sampler = !s.config.sampling()                         ? format::Sampler::kNone
              : s.config.kernel_sampler                    ? format::Sampler::kKernelRecorder
              : s.config.clock == format::ClockMode::kWall ? format::Sampler::kPosixMonotonicTimer
                                                           : format::Sampler::kPerfTaskClock;
  s.enabled.store(!s.config.start_paused);
  if (pthread_key_create(&g_thread_key, OnThreadExit) != 0 || !InstallSignalHandlers()) {
    LockSession();
    W().add(format::DisabledRecord{NowNs(),
                                   W().internString("no free signal or thread key for sampling")});
    WriteProfileLocked();
    UnlockSession();
    return;
  }
  s.phase.store(int(Phase::kRunning));
  pid_t self = GetTid();
  // The main thread decides which CPU sampler works here; the others follow it.
  ThreadSlot* main_slot = RegisterThread(self, true);
  if (main_slot) pthread_setspecific(g_thread_key, main_slot);
  // The main thread counts even without a slot (then it never leaves the count, and the
  // writer is stopped only at exit, as before).
  s.live_threads.store(1);
  if (main_slot && main_slot->has_timer && s.sampler == format::Sampler::kPerfTaskClock)
    s.sampler = format::Sampler::kPosixCpuTimer;
  LockSession();
  WriteProcessLocked(s.config.later_image ? uint64_t(format::kExecImage) : 0);
  CheckModulesLocked();
  if (main_slot) ThreadStartLocked(self, false);
  if (s.config.heap) StartHeap(W(), NowNs(), s.config.heap_sample_bytes, s.config.heap_seed);
  if (s.config.start_paused)
    W().add(format::StateRecord{NowNs(), uint64_t(self), 0, format::StateSource::kStartup});
  UnlockSession();
  RegisterPreexistingThreads(self);
  InitWatches();
  pthread_atfork(BeforeFork, AfterForkParent, AfterForkChild);
  StartWriterThread(NeedsWriterThread());
  if (s.threadless) {
    // What the writer's first round would have put on disk: the process, its modules.
    LockSession();
    FlushLocked(true);
    g_last_round.store(NowNs(), std::memory_order_relaxed);
    UnlockSession();
  }
}

// Stops every live thread's timer, keeping its CPU time in end_cpu_ns (read first: a thread
// that is gone has it only in its perf event). Returns the sum of the known ones.
uint64_t StopThreadTimersLocked() {
  uint64_t cpu_ns = 0;
  for (ThreadSlot& slot : UsedSlots()) {
    if (slot.state.load() != int(SlotState::kActive)) continue;
    slot.end_cpu_ns = SlotCpuNs(slot);
    if (slot.end_cpu_ns != format::kCpuUnknown) cpu_ns += slot.end_cpu_ns;
    StopTimer(&slot);
  }
  return cpu_ns;
}

// A forked child that ends having recorded nothing leaves no profile, only its count and CPU
// time for the root process to report. Call with the lock held.
void EndWithoutProfileLocked() {
  CountChildWithoutProfileLocked(StopThreadTimersLocked());
  g_session.phase.store(int(Phase::kDone));
}

// The quick way out for such a child: its writer thread is not even waited for (the process
// is ending). Returns false, changing nothing, when the child has data or the writer is busy.
bool FinishChildWithoutData() {
  Session& s = g_session;
  if (pthread_mutex_trylock(&s.lock) != 0) return false;
  EnterRuntime();
  bool has_data = ChildHasDataLocked();
  for (ThreadSlot& slot : UsedSlots())
    if (slot.state.load() == int(SlotState::kActive) && slot.ring.peek()) has_data = true;
  if (!has_data) EndWithoutProfileLocked();
  UnlockSession();
  return !has_data;
}

void FinishSession(format::EndHow how, uint64_t code, bool bounded) {
  Session& s = g_session;
  if (getpid() != s.pid) return;  // a vfork child sharing our memory: not ours to close
  // A signal sent now (a pool's SIGTERM to a worker leaving by exit) waits until the END is
  // written: its default action would end the process halfway through the profile's end.
  HoldSentSignals hold;
  int expected = int(Phase::kRunning);
  if (!s.phase.compare_exchange_strong(expected, int(Phase::kFinishing))) return;
  s.enabled.store(false);
  if (s.file_pending && FinishChildWithoutData()) return;
  bool on_writer = s.writer_running && pthread_equal(pthread_self(), s.writer_thread);
  if (!bounded && !on_writer) StopWriterThread();
  if (bounded) {
    // The crashing thread may have died holding a lock the writer needs: wait a bounded time.
    timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 1;
    EnterRuntime();
    if (pthread_mutex_timedlock(&s.lock, &until) != 0) {
      LeaveRuntime();
      return;
    }
    if (s.preamble_pending) WriteChildPreambleLocked();
  } else {
    LockSession();
  }
  uint64_t cpu_ns = StopThreadTimersLocked();
  DrainWatchesLocked(W());
  DrainLocked();
  if (s.file_pending && !ChildHasDataLocked()) {
    CountChildWithoutProfileLocked(cpu_ns);
    s.phase.store(int(Phase::kDone));
    UnlockSession();
    return;
  }
  uint64_t now = NowNs();
  uint64_t dropped = 0;
  for (ThreadSlot& slot : UsedSlots()) {
    if (slot.state.load() != int(SlotState::kActive)) continue;
    dropped += slot.dropped.load();
    W().add(format::ThreadEndRecord{now, uint64_t(slot.tid), slot.end_cpu_ns});
  }
  FinishTraceLocked(W(), now);
  DrainHeapLocked(W());
  uint64_t writer_cpu = s.writer_running ? ThreadCpuNs(g_writer_tid) : g_writer_cpu_ns;
  if (s.config.kernel_sampler && g_writer_tid)
    W().add(format::ThreadEndRecord{now, uint64_t(g_writer_tid), writer_cpu});
  auto stat = [&](const char* key, uint64_t value) {
    W().add(format::StatsRecord{now, W().internString(key), value});
  };
  stat("samples", s.samples);
  stat("samples_dropped", dropped);
  stat("stacks_broken", s.stacks_broken);
  stat("stacks_truncated", s.stacks_truncated);
  stat("signals_without_thread", s.unowned_signals.load());
  stat("sigio_absorbed", SigioAbsorbed());
  stat("threads_paused_blocking_signal", s.threads_paused);
  stat("runtime_cpu_ns", writer_cpu);
  uint64_t end_code = code;
  if (how == format::EndHow::kExit && !s.exit_code_known) end_code = 0;
  if (SizesWithoutCall()) stat("sizes_without_timed_call", SizesWithoutCall());
  if (s.rootImage() && s.shared) {
    stat("children_without_profile", s.shared->children_without_profile.load());
    stat("children_without_profile_cpu_ns", s.shared->children_without_profile_cpu_ns.load());
  }
  W().add(format::EndRecord{now, how, end_code});
  FlushLocked(true);
  s.phase.store(int(Phase::kDone));
  UnlockSession();
}

void FlushBeforeExec() {
  if (!Running() || getpid() != g_session.pid) return;
  LockSession();
  uint64_t now = NowNs();
  uint64_t exec_cpu_ns = StopThreadTimersLocked();
  for (ThreadSlot& slot : UsedSlots())
    if (slot.state.load() == int(SlotState::kActive))
      W().add(format::ThreadEndRecord{now, uint64_t(slot.tid), slot.end_cpu_ns});
  // A sampling signal still queued would survive exec and kill the new image (its default
  // action): ignoring the signal discards what is pending.
  DiscardPendingSamples();
  ShowProgramMaskToExec(true);
  DrainWatchesLocked(W());
  DrainLocked();
  FinishTraceLocked(W(), now);
  DrainHeapLocked(W());
  W().add(format::EndRecord{now, format::EndHow::kExec, 0});
  if (g_session.file_pending && !ChildHasDataLocked()) {
    CountChildWithoutProfileLocked(exec_cpu_ns);
    g_session.counted_at_exec = true;
  }
  FlushLocked(true);
  UnlockSession();
}

void ResumeAfterFailedExec() {
  if (!Running() || getpid() != g_session.pid) return;
  RestoreSampleHandler();
  ShowProgramMaskToExec(false);
  LockSession();
  if (g_session.counted_at_exec && g_session.shared) {
    g_session.shared->children_without_profile.fetch_sub(1);  // it lives on after all
    g_session.counted_at_exec = false;
  }
  for (ThreadSlot& slot : UsedSlots()) {
    if (slot.state.load() != int(SlotState::kActive)) continue;
    StartTimer(&slot);
    ArmThreadWatches(&slot);
    ThreadStartLocked(slot.tid, false);
  }
  UnlockSession();
}

void RecordThreadStart(pid_t tid, bool preexisting) {
  if (!Running()) return;
  LockSession();
  g_session.child_has_events = true;
  ThreadStartLocked(tid, preexisting);
  UnlockSession();
}

void RecordThreadName(pid_t tid, const char* name) {
  if (!Running()) return;
  LockSession();
  W().add(format::ThreadNameRecord{NowNs(), uint64_t(tid), W().internString(name)});
  UnlockSession();
}

void RecordState(bool on, format::StateSource source) {
  if (!Running()) return;
  LockSession();
  g_session.child_has_events = true;
  g_session.enabled.store(on);
  W().add(format::StateRecord{NowNs(), uint64_t(GetTid()), on ? 1u : 0u, source});
  UnlockSession();
}

void RecordMark(const char* label) {
  if (!Running() || !label) return;
  LockSession();
  g_session.child_has_events = true;
  W().add(format::MarkRecord{NowNs(), uint64_t(GetTid()), W().internString(label)});
  UnlockSession();
}

void RecordSize(uint64_t n) {
  if (!Running()) return;
  uint64_t function = 0, entry_tick = 0;
  if (!CurrentTimedCall(&function, &entry_tick)) return;
  LockSession();
  g_session.child_has_events = true;
  W().add(format::SizeRecord{NowNs(), uint64_t(GetTid()), function, entry_tick, n});
  UnlockSession();
}

namespace {
unsigned long long g_loader_adds = 0, g_loader_subs = 0;

int ReadLoaderCounters(dl_phdr_info* info, size_t size, void* changed) {
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs &&
      (info->dlpi_adds != g_loader_adds || info->dlpi_subs != g_loader_subs)) {
    g_loader_adds = info->dlpi_adds;
    g_loader_subs = info->dlpi_subs;
    *static_cast<bool*>(changed) = true;
  }
  return 1;  // the counters are the same in every entry: one is enough
}
}  // namespace

// dlopen is not interposed: glibc resolves a dlopen'ed name with the caller's RUNPATH, and a
// wrapper would make the runtime the caller. The loader's counters show changes instead.
void CheckModulesLocked() {
  bool changed = false;
  dl_iterate_phdr(ReadLoaderCounters, &changed);
  if (changed) RescanModules(W(), NowNs());
}

void RecordDisabled(const char* reason) {
  if (!Running()) return;
  LockSession();
  W().add(format::DisabledRecord{NowNs(), W().internString(reason)});
  UnlockSession();
}

void NoteToggle() {
  uint64_t index = g_flips_noted.fetch_add(1);
  Flip& flip = g_flips[index % kFlips];
  flip.serial.store(0, std::memory_order_relaxed);
  flip.time.store(NowNs(), std::memory_order_relaxed);
  flip.on.store(g_session.enabled.load() ? 1u : 0u, std::memory_order_relaxed);
  flip.serial.store(index + 1, std::memory_order_release);
}

void WriteIfDue() {
  Session& s = g_session;
  if (!s.threadless.load(std::memory_order_relaxed) || !Running()) return;
  uint64_t now = NowNs();
  if (now - g_last_round.load(std::memory_order_relaxed) < kDrainIntervalNs) return;
  // The signals that end the program wait until the round is over: their handler, run on this
  // thread inside the round, would find the lock held by its own thread and end the profile
  // without its END (a python3 pool's worker terminated under --heap-sample did).
  HoldSentSignals hold;
  // Another thread inside the runtime is writing already: its round will do.
  EnterRuntime();
  if (pthread_mutex_trylock(&s.lock) == 0) {
    if (s.preamble_pending) WriteChildPreambleLocked();
    if (Running() && s.threadless.load()) {
      g_last_round.store(now, std::memory_order_relaxed);
      WriterCycleLocked();
    }
    pthread_mutex_unlock(&s.lock);
  }
  LeaveRuntime();
}

void EnsureWriterThread() {
  if (!g_session.threadless.load() || !Running() || getpid() != g_session.pid) return;
  LockSession();  // two threads starting their first watch at once start one writer
  if (g_session.threadless.load() && Running()) StartWriterThread(true);
  UnlockSession();
}

void BeforeFork() {
  if (Running()) LockSession();
}

void AfterForkParent() {
  if (Running()) UnlockSession();
}

void AfterForkChild() {
  ResetSetxidAfterFork();
  ResetDescriptorLockAfterFork();
  Session& s = g_session;
  if (!Running()) return;
  InRuntime guard;  // what follows frees and allocates: a signal ending the child waits for it
  UnlockSession();
  s.pid = getpid();
  s.writer_running = false;  // threads other than the forking one do not exist in the child
  s.live_threads.store(1);
  s.samples = s.stacks_broken = s.stacks_truncated = 0;
  s.unowned_signals.store(0);
  // The child's own profile waits for its first data: a child that execs or exits at once (a
  // shell's, make's) then costs little more than without hotline, and leaves no empty file.
  s.path[0] = '\0';
  s.file_pending = true;
  s.child_has_events = false;
  s.counted_at_exec = false;
  W().reset();
  ResetWatchesAfterFork();
  ResetSlotsAfterFork();
  ResetTraceAfterFork();
  ResetHeapAfterFork();
  ThreadSlot* mine = CurrentSlot();
  s.preamble_tid = mine ? mine->tid : GetTid();
  s.preamble_pending = true;
  if (!mine) RegisterCurrentThread();
  g_writer_tid = 0;
  g_writer_cpu_ns = 0;
  g_flips_written = g_flips_noted.load();  // the parent writes the flips noted before the fork
  g_last_round.store(NowNs(), std::memory_order_relaxed);
  StartWriterThread(NeedsWriterThread());
}

}  // namespace hotline::rt

#include "runtime/watch.h"

#include <fcntl.h>
#include <link.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runtime/descriptors.h"
#include "runtime/session.h"
#include "runtime/signals.h"
#include "runtime/threads.h"

namespace hotline::rt {
namespace {

constexpr size_t kNameBytes = 128;
constexpr size_t kEnumeratorBytes = 4096;
constexpr uint64_t kRingHits = uint64_t{1} << 14;  // per thread: ~0.2 s of traps at 15 µs
constexpr size_t kBatchHits = 4096;                // hits per WATCH_HITS record
constexpr int kMaxNotes = 16;

enum class WatchState : int { kFree = 0, kActive = 1 };

struct Watch {
  WatchState state = WatchState::kFree;
  uint64_t id = 0;
  uint64_t address = 0, size = 0;
  format::WatchType type = format::WatchType::kSigned;
  uint64_t flags = 0;
  char name[kNameBytes] = {};
  char enumerators[kEnumeratorBytes] = {};  // "VALUE=NAME,VALUE=NAME"
  bool defined = false;                     // its WATCH record is written
};

struct HitRing {
  std::atomic<uint64_t> head{0};  // written by the thread's signal handler
  std::atomic<uint64_t> tail{0};  // written by the writer thread
  format::WatchHit hits[kRingHits];
};

// The watchpoints of one thread, at the index of its slot in g_slots.
struct ThreadWatches {
  pid_t tid = 0;
  bool armed[kMaxWatches] = {};
  int fd[kMaxWatches] = {};
  uint64_t perf_id[kMaxWatches] = {};
  int access_fd[kMaxWatches] = {};  // the read-or-write watchpoint when reads are counted, or -1
  uint64_t handler_reads[kMaxWatches] = {};  // values the trap handler read
  HitRing* ring = nullptr;
  std::atomic<uint64_t> dropped{0};  // hits lost to a full ring
  // Counts of closed watchpoints, written with the thread's next hits.
  format::WatchTotal totals[2 * kMaxWatches] = {};
  uint32_t total_count = 0;
};

// Guards g_watches, every ThreadWatches but the rings, and the notes. Taken after the session
// lock when both are held; never in a signal handler.
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
Watch g_watches[kMaxWatches];
ThreadWatches g_threads[kMaxThreads];
uint64_t g_next_id = 1;
bool g_off = false;  // a forked child: nothing is watched
// Watches ended since the last drain (unwatched, switched off), whose slots are free again:
// their WATCH records with kWatchEnded, and their definitions if not written yet.
constexpr int kMaxEnded = 16;
Watch g_ended[kMaxEnded];
int g_ended_count = 0;
uint64_t g_ended_lost = 0;
char g_notes[kMaxNotes][256];
int g_note_count = 0;
uint64_t g_notes_lost = 0;
format::WatchHit g_batch[kBatchHits];  // the writer's scratch
format::WatchEnumerator g_enumerators[256];

struct Locked {
  Locked() { pthread_mutex_lock(&g_lock); }
  ~Locked() { pthread_mutex_unlock(&g_lock); }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;
};

// For the paths the end of the process takes, perhaps from a fatal signal's handler on a thread
// that holds the lock: waits a second at most, and then the caller does without.
struct BoundedLock {
  BoundedLock() {
    timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 1;
    held = pthread_mutex_timedlock(&g_lock, &until) == 0;
  }
  ~BoundedLock() {
    if (held) pthread_mutex_unlock(&g_lock);
  }
  BoundedLock(const BoundedLock&) = delete;
  BoundedLock& operator=(const BoundedLock&) = delete;
  bool held = false;
};

void NoteLocked(const char* format, const char* name, const char* detail) {
  if (g_note_count == kMaxNotes) {
    ++g_notes_lost;
    return;
  }
  snprintf(g_notes[g_note_count++], sizeof g_notes[0], format, name, detail);
}

uint64_t ReadValue(uint64_t address, uint64_t size) {
  switch (size) {
    case 1:
      return *reinterpret_cast<const volatile uint8_t*>(address);
    case 2:
      return *reinterpret_cast<const volatile uint16_t*>(address);
    case 4:
      return *reinterpret_cast<const volatile uint32_t*>(address);
    default:
      return *reinterpret_cast<const volatile uint64_t*>(address);
  }
}

void OnWatchTrap(int sig, siginfo_t* info, void* uc) {
  int saved_errno = errno;
  ThreadSlot* slot = CurrentSlot();
  bool from_event = info->si_code >= POLL_IN && info->si_code <= POLL_HUP;
  if (slot && from_event) {
    ThreadWatches& t = g_threads[slot - g_slots];
    for (int w = 0; w < kMaxWatches; ++w) {
      if (!t.armed[w] || t.fd[w] != info->si_fd) continue;
      HitRing* ring = t.ring;
      uint64_t head = ring->head.load(std::memory_order_relaxed);
      if (head - ring->tail.load(std::memory_order_acquire) >= kRingHits) {
        t.dropped.fetch_add(1, std::memory_order_relaxed);
      } else {
        format::WatchHit& hit = ring->hits[head % kRingHits];
        hit.watch = g_watches[w].id;
        hit.time = NowNs();
        hit.value = ReadValue(g_watches[w].address, g_watches[w].size);
        ++t.handler_reads[w];
        hit.ip = uint64_t(static_cast<ucontext_t*>(uc)->uc_mcontext.gregs[REG_RIP]);
        ring->head.store(head + 1, std::memory_order_release);
      }
      errno = saved_errno;
      return;
    }
  }
  // Not a trap of a live watchpoint: the program's, if it handles the signal; otherwise a trap
  // that raced a watchpoint's closing, which must not kill the program (the default action).
  ChainSignalToProgram(sig, info, uc);
  errno = saved_errno;
}

int OpenWatchpoint(pid_t tid, const Watch& w, uint32_t bp_type) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_BREAKPOINT;
  attr.bp_type = bp_type;
  attr.bp_addr = w.address;
  attr.bp_len = w.size;
  attr.sample_period = 1;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.wakeup_events = 1;
  return int(syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

void OnWatchpointLost(int fd);

void CloseWatchpoint(int fd, uint64_t perf_id, uint64_t* count) {
  uint64_t id = 0;
  if (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0 || (perf_id && id != perf_id)) {
    ForgetDescriptor(fd);  // a raw close by the program gave the number to something else
    return;
  }
  ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  if (read(fd, count, sizeof *count) != ssize_t(sizeof *count)) *count = 0;
  CloseOwnDescriptor(fd);
}

// Closes watchpoint `w` of thread `t`, keeping the kernel's counts for the next drain.
void DisarmLocked(ThreadWatches& t, int w) {
  if (!t.armed[w]) return;
  t.armed[w] = false;
  format::WatchTotal total;
  total.watch = g_watches[w].id;
  CloseWatchpoint(t.fd[w], t.perf_id[w], &total.writes);
  if (t.access_fd[w] >= 0) {
    uint64_t id = 0;
    ioctl(t.access_fd[w], PERF_EVENT_IOC_ID, &id);
    CloseWatchpoint(t.access_fd[w], id, &total.reads);
    t.access_fd[w] = -1;
  }
  // The read-or-write watchpoint also trapped on every write, and on the handler's own read of
  // the new value after each.
  uint64_t not_reads = total.writes + t.handler_reads[w];
  total.reads = total.reads > not_reads ? total.reads - not_reads : 0;
  t.handler_reads[w] = 0;
  if (t.total_count < 2 * kMaxWatches) t.totals[t.total_count++] = total;
}

// Watch `w` is over (its watchpoints closed): its slot is free at once, its end is written at
// the next drain.
void EndLocked(int w) {
  if (g_ended_count < kMaxEnded) {
    g_ended[g_ended_count++] = g_watches[w];
  } else {
    ++g_ended_lost;
  }
  g_watches[w].state = WatchState::kFree;
}

// Switches watch `w` off in every thread and says why.
void SwitchOffLocked(int w, const char* why) {
  for (ThreadSlot& s : UsedSlots()) DisarmLocked(g_threads[&s - g_slots], w);
  NoteLocked("watch %s switched off: %s", g_watches[w].name, why);
  EndLocked(w);
}

// Opens watchpoint `w` on the thread of `t`. False (errno set) when the kernel refuses.
bool ArmLocked(ThreadWatches& t, int w) {
  if (!t.ring) {
    void* mem = mmap(nullptr, sizeof(HitRing), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) return false;
    t.ring = new (mem) HitRing();
  }
  const Watch& watch = g_watches[w];
  int fd =
      CreateOwned([&] { return OpenWatchpoint(t.tid, watch, HW_BREAKPOINT_W); }, OnWatchpointLost);
  if (fd < 0) return false;
  f_owner_ex owner{F_OWNER_TID, t.tid};
  uint64_t id = 0;
  if (fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) != 0 ||
      fcntl(fd, F_SETSIG, g_session.watch_signal) != 0 || fcntl(fd, F_SETOWN_EX, &owner) != 0 ||
      ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0) {
    int err = errno;
    CloseOwnDescriptor(fd);
    errno = err;
    return false;
  }
  int access_fd = -1;
  if (watch.flags & format::kWatchReads) {
    access_fd =
        CreateOwned([&] { return OpenWatchpoint(t.tid, watch, HW_BREAKPOINT_RW); }, nullptr);
    if (access_fd < 0 || ioctl(access_fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
      int err = errno;
      if (access_fd >= 0) CloseOwnDescriptor(access_fd);
      CloseOwnDescriptor(fd);
      errno = err;
      return false;
    }
  }
  t.fd[w] = fd;
  t.perf_id[w] = id;
  t.access_fd[w] = access_fd;
  t.armed[w] = true;  // before enabling: the first trap must find it
  if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
    int err = errno;
    t.armed[w] = false;
    CloseOwnDescriptor(fd);
    if (access_fd >= 0) CloseOwnDescriptor(access_fd);
    errno = err;
    return false;
  }
  return true;
}

// Arms watch `w` on every active thread; on a refusal switches it off everywhere.
bool ArmEverywhereLocked(int w) {
  for (ThreadSlot& s : UsedSlots()) {
    if (s.state.load(std::memory_order_acquire) != int(SlotState::kActive)) continue;
    ThreadWatches& t = g_threads[&s - g_slots];
    if (t.armed[w]) continue;
    t.tid = s.tid;
    if (!ArmLocked(t, w)) {
      char why[160];
      snprintf(why, sizeof why, "the kernel refused a watchpoint on thread %d (%s%s)", int(s.tid),
               strerror(errno), errno == ENOSPC ? ": every debug register is taken" : "");
      SwitchOffLocked(w, why);
      return false;
    }
  }
  return true;
}

void OnWatchpointLost(int fd) {
  Locked lock;
  for (ThreadSlot& s : UsedSlots()) {
    ThreadWatches& t = g_threads[&s - g_slots];
    for (int w = 0; w < kMaxWatches; ++w) {
      if (!t.armed[w] || t.fd[w] != fd) continue;
      // The program takes the number (dup2): the descriptor still works until its close, so
      // its count is read now and the watch goes on through a new one.
      DisarmLocked(t, w);
      if (g_watches[w].state == WatchState::kActive && !ArmLocked(t, w))
        SwitchOffLocked(w, "a new watchpoint could not replace one the program's dup2 took");
      return;
    }
  }
}

int FreeWatchLocked() {
  for (int w = 0; w < kMaxWatches; ++w)
    if (g_watches[w].state == WatchState::kFree) return w;
  return -1;
}

bool EnsureSignalLocked() {
  if (g_session.watch_signal > 0) return true;
  g_session.watch_signal = InstallRuntimeSignal(OnWatchTrap);
  return g_session.watch_signal > 0;
}

int ReadMainBias(dl_phdr_info* info, size_t, void* out) {
  *static_cast<uint64_t*>(out) = uint64_t(info->dlpi_addr);
  return 1;  // the first entry is the program itself
}

// One entry of HOTLINE_WATCH: ADDRESS,SIZE,TYPE,READS,NAME[,VALUE=ENUMERATOR...].
bool ParseSpec(const char* spec, size_t len, uint64_t bias, Watch* w) {
  char text[kNameBytes + kEnumeratorBytes + 64];
  if (len >= sizeof text) return false;
  std::memcpy(text, spec, len);
  text[len] = '\0';
  char* fields[5];
  char* p = text;
  for (char*& field : fields) {
    if (!p) return false;
    field = p;
    char* comma = std::strchr(p, ',');
    if (comma) *comma = '\0';
    p = comma ? comma + 1 : nullptr;
  }
  char* end;
  w->address = strtoull(fields[0], &end, 16) + bias;
  if (*end) return false;
  w->size = strtoull(fields[1], &end, 10);
  if (*end || (w->size != 1 && w->size != 2 && w->size != 4 && w->size != 8)) return false;
  uint64_t type = strtoull(fields[2], &end, 10);
  if (*end || type > format::kMaxWatchType) return false;
  w->type = format::WatchType(type);
  w->flags = fields[3][0] == '1' ? uint64_t(format::kWatchReads) : 0;
  if (std::strlen(fields[4]) >= kNameBytes || (p && std::strlen(p) >= kEnumeratorBytes))
    return false;
  std::strcpy(w->name, fields[4]);
  std::strcpy(w->enumerators, p ? p : "");
  return true;
}

}  // namespace

void InitWatches() {
  const char* specs = g_session.config.watch;
  if (!*specs || !g_session.rootImage() || !Running()) return;
  uint64_t bias = 0;
  dl_iterate_phdr(ReadMainBias, &bias);
  Locked lock;
  if (!EnsureSignalLocked()) {
    NoteLocked("%s%s", "nothing is watched: ", "no free real-time signal for the watchpoints");
    return;
  }
  for (const char* p = specs; *p;) {
    const char* semi = std::strchr(p, ';');
    size_t len = semi ? size_t(semi - p) : std::strlen(p);
    int w = FreeWatchLocked();
    if (w < 0) {
      NoteLocked("%s%s", "more variables than watchpoints: ", "the last ones are not watched");
      break;
    }
    Watch& watch = g_watches[w];
    if (ParseSpec(p, len, bias, &watch)) {
      watch.id = g_next_id++;
      watch.state = WatchState::kActive;
      watch.defined = false;
      ArmEverywhereLocked(w);
    } else {
      NoteLocked("%s%s", "a watch the runtime could not read was ignored: ", "bad HOTLINE_WATCH");
    }
    p = semi ? semi + 1 : p + len;
  }
}

void ArmThreadWatches(ThreadSlot* slot) {
  Locked lock;
  if (g_off) return;
  ThreadWatches& t = g_threads[slot - g_slots];
  t.tid = slot->tid;
  for (int w = 0; w < kMaxWatches; ++w) {
    if (g_watches[w].state != WatchState::kActive || t.armed[w]) continue;
    if (!ArmLocked(t, w)) {
      char why[160];
      snprintf(why, sizeof why, "the kernel refused a watchpoint on new thread %d (%s)",
               int(slot->tid), strerror(errno));
      SwitchOffLocked(w, why);
    }
  }
}

void DisarmThreadWatches(ThreadSlot* slot) {
  BoundedLock lock;
  if (!lock.held) return;
  ThreadWatches& t = g_threads[slot - g_slots];
  for (int w = 0; w < kMaxWatches; ++w) DisarmLocked(t, w);
}

void DrainWatchesLocked(format::Writer& writer) {
  BoundedLock lock;
  if (!lock.held) return;
  uint64_t now = NowNs();
  for (int i = 0; i < g_note_count; ++i) writer.add(format::NoteRecord{now, g_notes[i]});
  g_note_count = 0;
  auto define = [&](Watch& w, uint64_t extra_flags) {
    format::WatchRecord r;
    r.time = now;
    r.id = w.id;
    r.name = w.name;
    r.address = w.address;
    r.size = w.size;
    r.type = w.type;
    r.flags = w.flags | extra_flags;
    // "VALUE=NAME,VALUE=NAME": the views point into the watch's own text.
    uint64_t n = 0;
    for (const char* p = w.enumerators; *p && n < 256;) {
      const char* comma = std::strchr(p, ',');
      size_t len = comma ? size_t(comma - p) : std::strlen(p);
      const char* eq = static_cast<const char*>(std::memchr(p, '=', len));
      if (eq) {
        g_enumerators[n].value = strtoll(p, nullptr, 10);
        g_enumerators[n].name = std::string_view(eq + 1, size_t(p + len - eq - 1));
        ++n;
      }
      p = comma ? comma + 1 : p + len;
    }
    r.enumerator_count = extra_flags ? 0 : n;
    r.enumerators = g_enumerators;
    writer.add(r);
  };
  for (Watch& w : g_watches) {
    if (w.state == WatchState::kFree || w.defined) continue;
    define(w, 0);
    w.defined = true;
  }
  for (int i = 0; i < g_ended_count; ++i) {
    if (g_ended[i].defined) continue;
    define(g_ended[i], 0);
    g_ended[i].defined = true;
  }
  for (ThreadSlot& s : UsedSlots()) {
    ThreadWatches& t = g_threads[&s - g_slots];
    if (!t.ring) continue;
    for (;;) {
      uint64_t tail = t.ring->tail.load(std::memory_order_relaxed);
      uint64_t head = t.ring->head.load(std::memory_order_acquire);
      uint64_t n = head - tail < kBatchHits ? head - tail : kBatchHits;
      if (n == 0 && t.total_count == 0) break;
      for (uint64_t i = 0; i < n; ++i) g_batch[i] = t.ring->hits[(tail + i) % kRingHits];
      t.ring->tail.store(tail + n, std::memory_order_release);
      format::WatchHitsRecord r;
      r.time = n ? g_batch[0].time : now;
      r.tid = uint64_t(t.tid);
      r.hit_count = n;
      r.hits = g_batch;
      bool last = head - tail == n;  // totals go after the thread's last hits
      r.total_count = last ? t.total_count : 0;
      r.totals = t.totals;
      writer.add(r);
      if (last) {
        t.total_count = 0;
        break;
      }
    }
  }
  for (int i = 0; i < g_ended_count; ++i) define(g_ended[i], format::kWatchEnded);
  g_ended_count = 0;
  if (g_ended_lost) {
    char text[160];
    snprintf(text, sizeof text, "the ends of %llu watches were not recorded (too many at once)",
             static_cast<unsigned long long>(g_ended_lost));
    writer.add(format::NoteRecord{now, text});
    g_ended_lost = 0;
  }
  uint64_t dropped = 0;
  for (ThreadSlot& s : UsedSlots()) dropped += g_threads[&s - g_slots].dropped.exchange(0);
  if (dropped || g_notes_lost) {
    char text[160];
    snprintf(text, sizeof text, "%llu watch hits were lost (a thread's hit buffer was full)%s",
             static_cast<unsigned long long>(dropped),
             g_notes_lost ? "; further watch notes were lost" : "");
    writer.add(format::NoteRecord{now, text});
    g_notes_lost = 0;
  }
}

void ResetWatchesAfterFork() {
  pthread_mutex_init(&g_lock, nullptr);  // another thread of the parent may have held it
  g_off = true;
  for (ThreadSlot& s : UsedSlots()) {
    ThreadWatches& t = g_threads[&s - g_slots];
    for (int w = 0; w < kMaxWatches; ++w) {
      if (!t.armed[w]) continue;
      t.armed[w] = false;
      CloseOwnDescriptor(t.fd[w]);  // the parent's threads' watchpoints
      if (t.access_fd[w] >= 0) CloseOwnDescriptor(t.access_fd[w]);
    }
    t.total_count = 0;
    if (t.ring) t.ring->tail.store(t.ring->head.load());
  }
  for (Watch& w : g_watches) w.state = WatchState::kFree;
  g_note_count = 0;
  g_ended_count = 0;
}

int WatchObject(const void* address, size_t size, const char* name) {
  if (!Running() || !address) return -1;
  EnsureWriterThread();  // the hits are drained while the program runs (before the watch lock)
  uint64_t addr = uint64_t(address);
  const char* label = name && *name ? name : "(unnamed)";
  Locked lock;
  if (g_off) return -1;
  if ((size != 1 && size != 2 && size != 4 && size != 8) || addr % size != 0) {
    NoteLocked("hotline_watch(%s): %s", label,
               "not watched: a watchpoint covers 1, 2, 4 or 8 bytes at an address aligned to "
               "its size");
    return -1;
  }
  for (const Watch& w : g_watches) {
    if (w.state == WatchState::kActive && w.address == addr) {
      NoteLocked("hotline_watch(%s): %s", label, "not watched: the address is watched already");
      return -1;
    }
  }
  int w = FreeWatchLocked();
  if (w < 0) {
    NoteLocked("hotline_watch(%s): %s", label,
               "not watched: every watchpoint (4 debug registers) is in use");
    return -1;
  }
  if (!EnsureSignalLocked()) {
    NoteLocked("hotline_watch(%s): %s", label, "not watched: no free real-time signal");
    return -1;
  }
  Watch& watch = g_watches[w];
  watch.id = g_next_id++;
  watch.address = addr;
  watch.size = size;
  watch.type = format::WatchType::kSigned;
  watch.flags = format::kWatchFromApi;
  snprintf(watch.name, sizeof watch.name, "%s", label);
  watch.enumerators[0] = '\0';
  watch.defined = false;
  watch.state = WatchState::kActive;
  return ArmEverywhereLocked(w) ? 0 : -1;
}

int UnwatchObject(const void* address) {
  if (!Running()) return -1;
  Locked lock;
  for (int w = 0; w < kMaxWatches; ++w) {
    if (g_watches[w].state != WatchState::kActive || g_watches[w].address != uint64_t(address))
      continue;
    for (ThreadSlot& s : UsedSlots()) DisarmLocked(g_threads[&s - g_slots], w);
    EndLocked(w);
    return 0;
  }
  return -1;
}

}  // namespace hotline::rt

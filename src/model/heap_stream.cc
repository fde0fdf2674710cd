// Reading a file: the events put back into the program's order as they arrive (HeapStream), the
// time profile built in the same reading when asked, and the exact way of reading a file whose
// events come further out of order (HeapPlanner, then a second HeapStream); LoadHeapProfile.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <limits>
#include <mutex>
#include <queue>
#include <system_error>
#include <thread>
#include <utility>

#include "model/heap.h"
#include "model/heap_replay.h"

namespace hotline::model {
namespace {

using format::AllocKind;
using format::FreeKind;

// A heap event read and not yet applied.
struct Pending {
  uint64_t time;
  uint64_t index;  // in file order
  uint64_t tid, address, size, node, sample_bytes;
  uint8_t kind;
  bool is_alloc;
};

// The program's order (HeapReplay).
bool Before(const Pending& a, const Pending& b) {
  if (a.time != b.time) return a.time < b.time;
  if (a.is_alloc != b.is_alloc) return !a.is_alloc;
  return a.index < b.index;
}

// Events are grouped, in file order, in blocks of this many: the exact way's first reading
// notes each block's earliest time, and after each block of the second the events earlier than
// every later block's can be applied.
constexpr uint64_t kBlockEvents = 4096;

// The first reading of the exact way: how many events, and how late in the file an early one
// comes.
class HeapPlanner : public format::RecordVisitor {
 public:
  void onAlloc(const format::AllocRecord& r) override { add(r.time); }
  void onFree(const format::FreeRecord& r) override { add(r.time); }

  uint64_t events() const { return events_; }
  // For each block, the earliest time of all the blocks after it (none: the largest time).
  std::vector<uint64_t> laterMinima() const {
    std::vector<uint64_t> later(earliest_.size(), std::numeric_limits<uint64_t>::max());
    for (size_t k = earliest_.size(); k-- > 1;) later[k - 1] = std::min(later[k], earliest_[k]);
    return later;
  }

 private:
  void add(uint64_t time) {
    if (events_ % kBlockEvents == 0) {
      earliest_.push_back(time);
    } else {
      earliest_.back() = std::min(earliest_.back(), time);
    }
    ++events_;
  }

  uint64_t events_ = 0;
  std::vector<uint64_t> earliest_;  // by block
};

// A thread that wrote no heap event for this long after the latest one is taken to have none
// left that is older (the writer drains every thread's ring every 25 ms).
constexpr uint64_t kQuietNs = 250'000'000;
// Events held at most by the one reading; beyond, the earliest is applied on trust.
constexpr size_t kMaxHeld = size_t(1) << 18;
// Events read and handed to the applier thread at a time, and how many such batches the reader
// may be ahead (4 MiB): enough that on a busy machine, where a thread woken waits for a core,
// neither side waits for the other at every batch.
constexpr size_t kBatchEvents = 8192;
constexpr size_t kBatchesAhead = 8;

// A reading that builds the heap (and, asked, the time profile): keeps what resolves stacks
// (modules, stack nodes, strings, threads) but not the events, each held only until its place
// in the program's order is certain, then applied. The runtime's per-thread rings write each
// thread's events in time order but interleave threads up to a drain of the rings apart. How
// the reading knows that nothing earlier can follow:
//  - by the threads' clocks (the one reading): an event is certain once every thread that wrote
//    within kQuietNs of the latest event has written a later one. When that guess fails (a
//    thread's ring was drained later still, more than kMaxHeld events were held, or the file
//    is not in each thread's time order), an event arrives after a later one was applied:
//    outOfOrder() says so, and the caller reads the file the exact way;
//  - by the minima of later blocks (the exact way's second reading), from HeapPlanner.
class HeapStream : public ProfileStream {
 public:
  // By the threads' clocks; with `build`, the time profile too.
  HeapStream(AddressResolver& resolver, const HeapOptions& options,
             std::optional<BuildOptions> build)
      : ProfileStream(resolver, std::move(build)), replay_(*this, resolver, options) {}
  // By the minima of later blocks, those of a first reading that saw `events` events.
  HeapStream(AddressResolver& resolver, const HeapOptions& options, uint64_t events,
             std::vector<uint64_t> later_minima)
      : ProfileStream(resolver, std::nullopt),
        replay_(*this, resolver, options),
        by_blocks_(true),
        planned_events_(events),
        later_minima_(std::move(later_minima)) {}

  ~HeapStream() override { settle(); }

  void onAlloc(const format::AllocRecord& r) override {
    arrive(Pending{r.time, read_, r.tid, r.address, r.size, r.node, r.sample_bytes, uint8_t(r.kind),
                   true});
  }
  void onFree(const format::FreeRecord& r) override {
    arrive(Pending{r.time, read_, r.tid, r.address, r.size, 0, 0, uint8_t(r.kind), false});
  }
  // Records the heap has no use for, whose number grows with the run: kept only for the time
  // profile.
  void onTraceEvents(const format::TraceEventsRecord& r) override {
    if (buildsProfile()) ProfileStream::onTraceEvents(r);
  }
  void onWatchHits(const format::WatchHitsRecord& r) override {
    if (buildsProfile()) ProfileStream::onWatchHits(r);
  }
  void onSize(const format::SizeRecord& r) override {
    if (buildsProfile()) ProfileStream::onSize(r);
  }

  // After the reading: waits until every event read has been through hold().
  void settle() {
    if (applier_.joinable()) {
      send();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        read_all_ = true;
      }
      changed_.notify_all();
      applier_.join();
    }
    holdAll(batch_);
    batch_.clear();
  }

  uint64_t events() const { return read_; }
  // By the threads' clocks, after settle(): whether an event came after a later one was applied.
  bool outOfOrder() const { return !in_order_; }

  // After settle(): applies what is still held and gives the heap.
  Expected<HeapProfile> finish() {
    applyBefore(std::numeric_limits<uint64_t>::max());
    if (by_blocks_ && (!in_order_ || read_ != planned_events_ || replay_.applied() != read_))
      return Status::Error("the file changed while it was read (" +
                           std::to_string(planned_events_) + " heap events at the first reading, " +
                           std::to_string(read_) + " at the second)");
    return replay_.finish(HeapSampleBytes(stats));
  }

 private:
  struct Later {
    bool operator()(const Pending& a, const Pending& b) const { return Before(b, a); }
  };
  struct ThreadClock {
    uint64_t tid, time;  // the thread's latest event
  };

  // The reader's side: events go to the applier thread in batches, the reader going on
  // meanwhile (kBatchesAhead at most). The applier takes them in file order, so the heap
  // is the same as one thread's; a profile of less than a batch is applied without a thread.
  void arrive(const Pending& event) {
    ++read_;
    if (abandoned_.load(std::memory_order_relaxed)) return;  // to be read again the exact way
    batch_.push_back(event);
    if (batch_.size() < kBatchEvents) return;
    if (!applier_.joinable() && !without_thread_) {
      try {
        applier_ = std::thread([this] { applyBatches(); });
      } catch (const std::system_error&) {
        without_thread_ = true;  // no thread to be had: the reader applies them itself
      }
    }
    if (applier_.joinable()) {
      send();
    } else {
      holdAll(batch_);
      batch_.clear();
    }
  }

  // Hands the batch read to the applier, waiting while it has kBatchesAhead others to apply.
  void send() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return to_apply_.size() < kBatchesAhead; });
    to_apply_.push_back(std::move(batch_));
    if (spare_.empty()) {
      batch_ = {};
      batch_.reserve(kBatchEvents);
    } else {
      batch_ = std::move(spare_.back());
      spare_.pop_back();
    }
    lock.unlock();
    changed_.notify_all();
  }

  // The applier thread.
  void applyBatches() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return !to_apply_.empty() || read_all_; });
      if (to_apply_.empty()) return;
      std::vector<Pending> batch = std::move(to_apply_.front());
      to_apply_.pop_front();
      lock.unlock();
      changed_.notify_all();
      holdAll(batch);
      batch.clear();
      lock.lock();
      spare_.push_back(std::move(batch));
    }
  }

  void holdAll(const std::vector<Pending>& batch) {
    constexpr size_t kAhead = 8;  // events between a block's prefetch and its look-up
    for (size_t i = 0; i < batch.size(); ++i) {
      if (i + kAhead < batch.size()) replay_.expect(batch[i + kAhead].address);
      if (i + 1 == batch.size() || !applyAtOnce(batch[i], batch[i + 1])) hold(batch[i]);
    }
  }

  // The common case, by the threads' clocks: nothing held, one thread writing, and its next
  // event later than this one. Then hold() would apply the event at once; this does it without
  // holding it.
  bool applyAtOnce(const Pending& event, const Pending& next) {
    if (by_blocks_ || held() != 0 || clocks_.size() != 1) return false;
    ThreadClock& clock = clocks_.front();
    if (event.tid != clock.tid || next.tid != clock.tid || next.time <= event.time) return false;
    if (applied_any_ && Before(event, last_)) return false;
    apply(event);
    clock.time = std::max(clock.time, event.time);
    latest_ = std::max(latest_, event.time);
    return true;
  }

  void hold(const Pending& event) {
    if (!by_blocks_ && !in_order_) return;  // to be read again the exact way
    if (applied_any_ && Before(event, last_)) {
      in_order_ = false;
      if (!by_blocks_) {
        abandoned_.store(true, std::memory_order_relaxed);
        run_.clear();
        run_start_ = 0;
        late_ = {};
        return;
      }
    }
    keep(event);
    if (by_blocks_) {
      if ((event.index + 1) % kBlockEvents == 0) {
        size_t block = event.index / kBlockEvents;
        // A file longer than at its first reading: hold on (finish() says what happened).
        applyBefore(block < later_minima_.size() ? later_minima_[block] : 0);
      }
      return;
    }
    applyBefore(watermark(event.tid, event.time));
    while (held() > kMaxHeld) applyEarliest();
  }

  // The earliest time an event still to come can have, by the threads' clocks.
  uint64_t watermark(uint64_t tid, uint64_t time) {
    latest_ = std::max(latest_, time);
    uint64_t low = time;
    bool known = false;
    size_t kept = 0;
    for (ThreadClock clock : clocks_) {
      if (clock.tid == tid) {
        clock.time = std::max(clock.time, time);
        known = true;
      }
      if (latest_ - clock.time > kQuietNs) continue;  // quiet: nothing older left
      low = std::min(low, clock.time);
      clocks_[kept++] = clock;
    }
    clocks_.resize(kept);
    if (!known) clocks_.push_back(ThreadClock{tid, time});
    return low;
  }

  // Events held: those that came in the program's order, and those that came before one of them.
  size_t held() const { return run_.size() - run_start_ + late_.size(); }
  void keep(const Pending& event) {
    if (run_start_ == run_.size() || !Before(event, run_.back())) {
      run_.push_back(event);
    } else {
      late_.push(event);
    }
  }
  // The earliest held event, when there is one.
  const Pending* earliest() const {
    const Pending* in_run = run_start_ < run_.size() ? &run_[run_start_] : nullptr;
    if (late_.empty()) return in_run;
    return in_run && Before(*in_run, late_.top()) ? in_run : &late_.top();
  }

  // Applies, in order, the held events earlier than `time` (all of them at the largest).
  void applyBefore(uint64_t time) {
    for (const Pending* e = earliest();
         e && (e->time < time || time == std::numeric_limits<uint64_t>::max()); e = earliest())
      applyEarliest();
  }

  void apply(const Pending& e) {
    if (e.is_alloc) {
      replay_.allocate(format::AllocRecord{e.time, e.tid, e.address, e.size, e.node,
                                           AllocKind(e.kind), e.sample_bytes});
    } else {
      replay_.deallocate(format::FreeRecord{e.time, e.tid, e.address, FreeKind(e.kind), e.size});
    }
    last_ = e;
    applied_any_ = true;
  }

  void applyEarliest() {
    const Pending* earliest_event = earliest();
    apply(*earliest_event);
    if (!late_.empty() && earliest_event == &late_.top()) {
      late_.pop();
    } else if (++run_start_ == run_.size()) {
      run_.clear();
      run_start_ = 0;
    } else if (run_start_ >= 64 && run_start_ * 2 >= run_.size()) {
      run_.erase(run_.begin(), run_.begin() + std::ptrdiff_t(run_start_));
      run_start_ = 0;
    }
  }

  // The applier's (the reader's without a thread, and after settle()), on cache lines apart
  // from the reader's: each side writes its own for every event.
  alignas(64) HeapReplay replay_;
  bool by_blocks_ = false;
  uint64_t planned_events_ = 0;
  std::vector<uint64_t> later_minima_;
  std::vector<Pending> run_;  // from run_start_: events held, in the program's order
  size_t run_start_ = 0;
  std::priority_queue<Pending, std::vector<Pending>, Later> late_;  // the earliest on top
  std::vector<ThreadClock> clocks_;                                 // the threads not quiet
  uint64_t latest_ = 0;  // the latest time of an event read
  Pending last_{};       // the last event applied
  bool applied_any_ = false, in_order_ = true;
  // The reader's.
  alignas(64) uint64_t read_ = 0;
  std::vector<Pending> batch_;  // read, not yet sent
  bool without_thread_ = false;
  // Shared: batches sent and not yet applied, and applied ones to fill again.
  alignas(64) std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::vector<Pending>> to_apply_;
  std::vector<std::vector<Pending>> spare_;
  bool read_all_ = false;
  std::atomic<bool> abandoned_{false};  // the threads' clocks failed: events no longer matter
  std::thread applier_;
};

}  // namespace

Expected<HeapLoad> LoadHeapProfile(const std::string& path, AddressResolver& resolver,
                                   const HeapOptions& options,
                                   std::optional<BuildOptions> profile) {
  HeapLoad load{Status::Error(kNoHeapRecords), {}, std::nullopt};
  HeapStream stream(resolver, options, std::move(profile));
  Status read = format::ReadProfileFile(path, stream, &load.stats);
  if (!read.ok()) return read;
  stream.settle();
  if (stream.events() > 0 && !stream.outOfOrder()) {
    load.heap = stream.finish();
  } else if (stream.events() > 0) {
    // The exact way: a first reading for the blocks' minima, a second to build.
    HeapPlanner planner;
    format::ReadStats again;
    read = format::ReadProfileFile(path, planner, &again);
    if (!read.ok()) return read;
    HeapStream exact(resolver, options, planner.events(), planner.laterMinima());
    read = format::ReadProfileFile(path, exact, &again);
    if (!read.ok()) return read;
    exact.settle();
    load.heap = exact.finish();
  }
  // After the heap, whose symbolizing may add to the resolver's warnings.
  if (stream.buildsProfile()) load.profile = stream.finishProfile();
  return load;
}

}  // namespace hotline::model

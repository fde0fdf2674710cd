// HeapReplay: the heap events applied one by one in the program's order, keeping only the live
// blocks and the sums per stack node, and the HeapProfile made from them at the end. Internal to
// src/model: both ways of building a heap (heap.cc, heap_stream.cc) replay with it.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "format/raw_profile.h"
#include "model/build.h"
#include "model/flat_map.h"
#include "model/heap.h"
#include "model/heap_sites.h"

namespace hotline::model {

// A block allocated and not yet released.
struct Live {
  uint64_t size;
  double calls;    // what the block stands for: 1 unless it was sampled
  uint64_t event;  // the index, in the program's order, of the event that allocated it
  uint32_t stack;  // the allocation's stack node, by first use (HeapReplay)
  bool mmap;
  double bytes() const { return calls * double(size); }
};

// Totals kept as sums of weights while the events are replayed, rounded once at the end.
struct StackSums {
  double calls = 0, bytes = 0, live_calls = 0, live_bytes = 0;
  uint64_t temporary_calls = 0;
};

// What both ways of building a heap (heap.cc, heap_stream.cc) fail with when there is nothing to
// replay.
// The sampled heap's mean bytes between samples (STATS heap_sample_bytes), 0 when every event
// was recorded.
inline uint64_t HeapSampleBytes(const std::vector<std::pair<std::string, uint64_t>>& stats) {
  uint64_t sample_bytes = 0;
  for (const auto& [key, value] : stats)
    if (key == "heap_sample_bytes") sample_bytes = value;
  return sample_bytes;
}

inline constexpr char kNoHeapRecords[] =
    "the profile has no heap records (record with hotline record --heap)";

// Replays the heap events one by one in the program's order: by time, a release before an
// allocation at the same time (the runtime stamps a release before the block can be reused),
// else in file order. Keeps the live blocks, sums per stack node and per thread its last
// allocation; never an event once it has been applied. Needs nothing known in advance: the
// first event applied is the earliest, the timeline's zero. Stacks are symbolized and grouped
// into sites only at the end, with every module and stack node of the file known, so a reading
// that streams gets the same frames as one that read everything first.
class HeapReplay {
 public:
  HeapReplay(const format::RawProfile& raw, AddressResolver& resolver, const HeapOptions& options)
      : sites_(raw, resolver, options) {}

  // How many events were applied.
  uint64_t applied() const { return event_; }

  // Tells that an event of the block at `address` is to come soon.
  void expect(uint64_t address) const { live_.prefetch(address); }

  void allocate(const format::AllocRecord& a);

  void deallocate(const format::FreeRecord& f);

  // `sample_bytes`: the STATS record heap_sample_bytes, 0 when there is none.
  HeapProfile finish(uint64_t sample_bytes);

 private:
  // A block that was live at the peak and has been released since.
  struct Released {
    double bytes, calls;
    uint32_t stack;
  };

  // The index of stack `node`, by first use; its first use's time symbolizes it (moduleAt).
  uint32_t stackOf(uint64_t node, uint64_t time);

  // Takes a block's release into account (the caller forgets it).
  void released(const Live& block);

  // After an event that changed the live heap: a point of the timeline, every so many events.
  void point(uint64_t time);

  // Every other point of the timeline: those at a multiple of twice the step.
  void thinTimeline();

  SiteTable sites_;
  HeapProfile heap_;
  uint64_t start_ = 0;                     // the first event's time
  uint64_t event_ = 0;                     // the index of the next event
  uint64_t timeline_step_ = 1;             // events between points (thinTimeline)
  uint64_t next_point_ = 0;                // the next multiple of the step
  std::vector<uint64_t> timeline_events_;  // the event of each point of the timeline
  std::optional<std::pair<uint64_t, double>> last_point_;  // the last event's time and bytes
  bool last_point_in_timeline_ = false;
  FlatMap<uint32_t> stack_index_;                         // stack node → index
  uint64_t last_node_ = 0;                                // the last allocation's stack node
  uint32_t last_stack_ = 0;                               // and its index
  std::vector<std::pair<uint64_t, uint64_t>> first_use_;  // by index: node, time
  std::vector<StackSums> stack_sums_;                     // by index
  FlatMap<Live> live_;                                    // by address
  FlatMap<uint64_t> last_alloc_of_thread_;                // tid → address, 0 once used
  double histogram_[65] = {};                             // by SizeClassIndex
  bool histogram_used_[65] = {};
  uint64_t first_sample_bytes_ = 0;  // of the first sampled allocation
  uint64_t temporary_calls_ = 0;
  double alloc_calls_ = 0, total_bytes_ = 0, free_calls_ = 0, mmap_calls_ = 0, mmap_bytes_ = 0;
  double munmap_calls_ = 0, current_ = 0, peak_ = 0, variance_ = 0;
  uint64_t peak_event_ = 0;
  std::vector<Released> released_since_peak_;  // at most the blocks live at the peak
};

}  // namespace hotline::model

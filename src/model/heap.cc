// BuildHeapProfile: the heap of a RawProfile read whole, its events sorted into the program's
// order and replayed.
#include "model/heap.h"

#include <algorithm>
#include <vector>

#include "model/heap_replay.h"

namespace hotline::model {

Expected<HeapProfile> BuildHeapProfile(const format::RawProfile& raw, AddressResolver& resolver,
                                       const HeapOptions& options) {
  if (raw.allocs.empty() && raw.frees.empty()) return Status::Error(kNoHeapRecords);

  // The program's order (HeapReplay), by a stable sort of all the events.
  struct Event {
    uint64_t time;
    bool is_alloc;
    size_t index;  // into raw.allocs or raw.frees
  };
  std::vector<Event> events;
  events.reserve(raw.allocs.size() + raw.frees.size());
  for (size_t i = 0; i < raw.allocs.size(); ++i) events.push_back({raw.allocs[i].time, true, i});
  for (size_t i = 0; i < raw.frees.size(); ++i) events.push_back({raw.frees[i].time, false, i});
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    if (a.time != b.time) return a.time < b.time;
    return !a.is_alloc && b.is_alloc;
  });

  HeapReplay replay(raw, resolver, options);
  for (const Event& ev : events) {
    if (ev.is_alloc) {
      replay.allocate(raw.allocs[ev.index]);
    } else {
      replay.deallocate(raw.frees[ev.index]);
    }
  }
  return replay.finish(HeapSampleBytes(raw.stats));
}

}  // namespace hotline::model

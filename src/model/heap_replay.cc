// The heap's replay: each allocation and release applied to the live blocks and the sums per
// stack node, the peak and the timeline followed as they go, and at the end the totals, sites,
// leaks, the peak's share per site and the size histogram rounded from the sums of weights.
#include "model/heap_replay.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <unordered_map>

namespace hotline::model {
namespace {

using format::AllocKind;
using format::FreeKind;

// The allocations a sampled one stands for: 1 / P(sampled), P = 1 - exp(-size / N).
double SampleWeight(uint64_t size, uint64_t sample_bytes) {
  if (!sample_bytes) return 1.0;
  double p = -std::expm1(-double(size) / double(sample_bytes));
  return p > 0 ? 1.0 / p : 1.0;  // size 0: no point can fall inside, never sampled
}

uint64_t Round(double v) { return v <= 0 ? 0 : uint64_t(std::llround(v)); }

// A site's totals, kept as StackSums' are (heap_replay.h).
struct SiteSums {
  double calls = 0, bytes = 0, peak_bytes = 0, leaked_calls = 0, leaked_bytes = 0;
  uint64_t temporary_calls = 0;
};

// The index of the power-of-two size class of `size` among 0, 1, 2, 4, ...: 0 for 0, else the
// bit width of size.
unsigned SizeClassIndex(uint64_t size) {
  return size == 0 ? 0u : 64u - unsigned(__builtin_clzll(size));
}

// The timeline keeps every `step`-th event's point, and when it holds this many, every other
// one, doubling the step: between half this and this many points, however many events.
constexpr size_t kHeapTimelinePoints = 1024;

}  // namespace

void HeapReplay::allocate(const format::AllocRecord& a) {
  if (event_ == 0) start_ = a.time;
  auto [slot, added] = live_.insert(a.address);
  if (!added) released(live_.at(slot));  // allocated again without a release we saw: freed
  bool mmap = a.kind == AllocKind::kMmap;
  uint32_t stack = stackOf(a.node, a.time);
  double weight = SampleWeight(a.size, a.sample_bytes);
  double bytes = weight * double(a.size);
  if (a.sample_bytes) {
    if (!first_sample_bytes_) first_sample_bytes_ = a.sample_bytes;
    if (!mmap) {
      ++heap_.sampled_calls;
      variance_ += bytes * bytes * (1.0 - 1.0 / weight);  // size² (1 − p) / p²
    }
  }
  live_.at(slot) = Live{a.size, weight, event_, stack, mmap};
  if (mmap) {
    mmap_calls_ += weight;
    mmap_bytes_ += bytes;
  } else {
    alloc_calls_ += weight;
    total_bytes_ += bytes;
    current_ += bytes;
    stack_sums_[stack].calls += weight;
    stack_sums_[stack].bytes += bytes;
    unsigned size_class = SizeClassIndex(a.size);
    histogram_[size_class] += weight;
    histogram_used_[size_class] = true;
    last_alloc_of_thread_.at(last_alloc_of_thread_.insert(a.tid).first) = a.address;
    if (current_ > peak_) {
      peak_ = current_;
      heap_.peak_time_ns = a.time - start_;
      peak_event_ = event_;
      released_since_peak_.clear();  // all were released before this peak
    }
  }
  point(a.time);
}

void HeapReplay::deallocate(const format::FreeRecord& f) {
  if (event_ == 0) start_ = f.time;
  size_t slot = live_.find(f.address);
  if (slot == FlatMap<Live>::kNone) {
    if (f.kind != FreeKind::kRealloc) ++heap_.unknown_frees;
    ++event_;
    return;
  }
  const Live& block = live_.at(slot);
  if (block.mmap) {
    if (f.kind == FreeKind::kMunmap) munmap_calls_ += block.calls;
    live_.erase(slot);
    ++event_;
    return;
  }
  if (f.kind != FreeKind::kRealloc) free_calls_ += block.calls;
  // A temporary, unless the profile turns out to be sampled (finish): whether other
  // allocations came between cannot be told from samples.
  size_t last = last_alloc_of_thread_.find(f.tid);
  if (last != FlatMap<uint64_t>::kNone) {
    uint64_t& address = last_alloc_of_thread_.at(last);
    if (address == f.address && f.kind != FreeKind::kRealloc) {
      ++temporary_calls_;
      ++stack_sums_[block.stack].temporary_calls;
    }
    address = 0;
  }
  released(block);
  live_.erase(slot);
  point(f.time);
}

HeapProfile HeapReplay::finish(uint64_t sample_bytes) {
  HeapProfile& heap = heap_;
  heap.sample_bytes = sample_bytes ? sample_bytes : first_sample_bytes_;
  if (heap.sample_bytes) {
    temporary_calls_ = 0;
    for (StackSums& sums : stack_sums_) sums.temporary_calls = 0;
  }
  heap.temporary_calls = temporary_calls_;
  if (!last_point_in_timeline_ && last_point_)
    heap.timeline.push_back(HeapPoint{last_point_->first - start_, Round(last_point_->second)});

  // The stacks and their sites, in the order of first use: the stack nodes' indexes here
  // are the stacks' there.
  std::vector<uint32_t> site_of(first_use_.size());
  for (size_t i = 0; i < first_use_.size(); ++i)
    site_of[i] = sites_.of(first_use_[i].first, first_use_[i].second).site;
  std::vector<SiteSums> site_sums(sites_.sites().size());
  for (size_t i = 0; i < stack_sums_.size(); ++i) {
    SiteSums& site = site_sums[site_of[i]];
    site.calls += stack_sums_[i].calls;
    site.bytes += stack_sums_[i].bytes;
    site.temporary_calls += stack_sums_[i].temporary_calls;
  }

  // Leaks: what is still live, per site and per full stack.
  struct LeakSums {
    double calls = 0, bytes = 0;
  };
  std::unordered_map<uint32_t, LeakSums> leaks_by_stack;
  double leaked_calls = 0, leaked_bytes = 0, mmap_leaked_bytes = 0;
  live_.forEach([&](uint64_t, const Live& block) {
    if (block.mmap) {
      mmap_leaked_bytes += block.bytes();
      return;
    }
    leaked_calls += block.calls;
    leaked_bytes += block.bytes();
    site_sums[site_of[block.stack]].leaked_calls += block.calls;
    site_sums[site_of[block.stack]].leaked_bytes += block.bytes();
    stack_sums_[block.stack].live_calls += block.calls;
    stack_sums_[block.stack].live_bytes += block.bytes();
    LeakSums& leak = leaks_by_stack[block.stack];
    leak.calls += block.calls;
    leak.bytes += block.bytes();
  });
  for (auto& [stack, sums] : leaks_by_stack) {
    HeapLeak leak;
    leak.calls = Round(sums.calls);
    leak.bytes = Round(sums.bytes);
    leak.stack = sites_.stackText(stack);
    heap.leaks.push_back(std::move(leak));
  }
  std::sort(heap.leaks.begin(), heap.leaks.end(), [](const HeapLeak& a, const HeapLeak& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.stack < b.stack;
  });

  // Each site's part of the peak: the blocks live at the peak are those allocated by then and
  // still live, and those released since.
  if (peak_ > 0) {
    double peak_variance = 0;
    auto add = [&](uint32_t stack, double bytes, double weight) {
      site_sums[site_of[stack]].peak_bytes += bytes;
      peak_variance += bytes * bytes * (1.0 - 1.0 / weight);
    };
    live_.forEach([&](uint64_t, const Live& block) {
      if (!block.mmap && block.event <= peak_event_) add(block.stack, block.bytes(), block.calls);
    });
    for (const Released& block : released_since_peak_) add(block.stack, block.bytes, block.calls);
    heap.peak_bytes_error = Round(std::sqrt(peak_variance));
  }

  for (size_t i = 0; i < site_sums.size(); ++i) {
    HeapSite& s = sites_.sites()[i];
    s.calls = Round(site_sums[i].calls);
    s.bytes = Round(site_sums[i].bytes);
    s.peak_bytes = Round(site_sums[i].peak_bytes);
    s.temporary_calls = site_sums[i].temporary_calls;
    s.leaked_calls = Round(site_sums[i].leaked_calls);
    s.leaked_bytes = Round(site_sums[i].leaked_bytes);
  }
  for (size_t i = 0; i < stack_sums_.size(); ++i) {
    HeapStack& stack = sites_.stacks()[i];
    stack.calls = Round(stack_sums_[i].calls);
    stack.bytes = Round(stack_sums_[i].bytes);
    stack.live_calls = Round(stack_sums_[i].live_calls);
    stack.live_bytes = Round(stack_sums_[i].live_bytes);
  }
  heap.peak_bytes = Round(peak_);
  heap.total_bytes = Round(total_bytes_);
  heap.alloc_calls = Round(alloc_calls_);
  heap.free_calls = Round(free_calls_);
  heap.leaked_calls = Round(leaked_calls);
  heap.leaked_bytes = Round(leaked_bytes);
  heap.mmap_calls = Round(mmap_calls_);
  heap.mmap_bytes = Round(mmap_bytes_);
  heap.munmap_calls = Round(munmap_calls_);
  heap.mmap_leaked_bytes = Round(mmap_leaked_bytes);
  heap.total_bytes_error = Round(std::sqrt(variance_));

  sites_.addChains();
  heap.sites = std::move(sites_.sites());
  heap.stacks = std::move(sites_.stacks());
  for (unsigned i = 0; i < std::size(histogram_); ++i)
    if (histogram_used_[i])
      heap.size_histogram.emplace_back(i == 0 ? 0 : uint64_t(1) << (i - 1), Round(histogram_[i]));
  return std::move(heap);
}

uint32_t HeapReplay::stackOf(uint64_t node, uint64_t time) {
  if (node == last_node_ && !first_use_.empty()) return last_stack_;
  auto [slot, added] = stack_index_.insert(node);
  if (added) {
    stack_index_.at(slot) = uint32_t(first_use_.size());
    first_use_.emplace_back(node, time);
    stack_sums_.emplace_back();
  }
  last_node_ = node;
  last_stack_ = stack_index_.at(slot);
  return last_stack_;
}

void HeapReplay::released(const Live& block) {
  if (block.mmap) return;
  current_ -= block.bytes();
  if (peak_ > 0 && block.event <= peak_event_)
    released_since_peak_.push_back(Released{block.bytes(), block.calls, block.stack});
}

void HeapReplay::point(uint64_t time) {
  last_point_in_timeline_ = event_ >= next_point_;
  if (last_point_in_timeline_) {
    heap_.timeline.push_back(HeapPoint{time - start_, Round(current_)});
    timeline_events_.push_back(event_);
    if (heap_.timeline.size() == kHeapTimelinePoints) thinTimeline();
    next_point_ = (event_ / timeline_step_ + 1) * timeline_step_;
  }
  last_point_ = {time, current_};
  ++event_;
}

void HeapReplay::thinTimeline() {
  timeline_step_ *= 2;
  size_t kept = 0;
  for (size_t i = 0; i < heap_.timeline.size(); ++i) {
    if (timeline_events_[i] % timeline_step_ != 0) continue;
    heap_.timeline[kept] = heap_.timeline[i];
    timeline_events_[kept] = timeline_events_[i];
    ++kept;
  }
  heap_.timeline.resize(kept);
  timeline_events_.resize(kept);
  last_point_in_timeline_ = !timeline_events_.empty() && timeline_events_.back() == event_;
}

}  // namespace hotline::model

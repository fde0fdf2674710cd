#include "model/heap.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <queue>
#include <system_error>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "model/system_code.h"

namespace hotline::model {
namespace {

using format::AllocKind;
using format::FreeKind;

// A block allocated and not yet released.
struct Live {
  uint64_t size;
  double calls;    // what the block stands for: 1 unless it was sampled
  uint64_t event;  // the index, in the program's order, of the event that allocated it
  uint32_t stack;  // the allocation's stack node, by first use (HeapReplay)
  bool mmap;
  double bytes() const { return calls * double(size); }
};

// The allocations a sampled one stands for: 1 / P(sampled), P = 1 - exp(-size / N).
double SampleWeight(uint64_t size, uint64_t sample_bytes) {
  if (!sample_bytes) return 1.0;
  double p = -std::expm1(-double(size) / double(sample_bytes));
  return p > 0 ? 1.0 / p : 1.0;  // size 0: no point can fall inside, never sampled
}

uint64_t Round(double v) { return v <= 0 ? 0 : uint64_t(std::llround(v)); }

// Totals kept as sums of weights while the events are replayed, rounded once at the end.
struct SiteSums {
  double calls = 0, bytes = 0, peak_bytes = 0, leaked_calls = 0, leaked_bytes = 0;
  uint64_t temporary_calls = 0;
};
struct StackSums {
  double calls = 0, bytes = 0, live_calls = 0, live_bytes = 0;
  uint64_t temporary_calls = 0;
};

std::string FrameText(const HeapFrame& f) {
  return f.file.empty() ? f.function
                        : f.function + " (" + f.file + ":" + std::to_string(f.line) + ")";
}

// The stacks and sites of the allocations, by stack node.
class SiteTable {
 public:
  SiteTable(const format::RawProfile& raw, AddressResolver& resolver, const HeapOptions& options)
      : raw_(raw), resolver_(resolver), options_(options) {}

  struct Node {
    uint32_t stack;  // into stacks()
    uint32_t site;   // into sites()
  };

  const Node& of(uint64_t node, uint64_t time) {
    auto found = nodes_.find(node);
    if (found != nodes_.end()) return found->second;
    HeapStack stack;
    for (uint64_t address : raw_.stack(node)) {
      const std::vector<HeapFrame>& frames = describe(address, time);
      stack.frames.insert(stack.frames.end(), frames.begin(), frames.end());
    }
    if (stack.frames.empty())
      stack.frames.push_back(HeapFrame{"[unknown]", "", 0, 0, false, "", 0});
    // The site: the first frame of the program's own code; the one inside it, the library
    // function it called.
    size_t at = 0;
    if (!options_.allocator_frames) {
      while (at < stack.frames.size() && stack.frames[at].system) ++at;
      if (at == stack.frames.size()) at = 0;  // all the system's: the allocator's caller
    }
    const HeapFrame& f = stack.frames[at];
    HeapSite site;
    site.function = f.function;
    site.file = f.file;
    site.line = f.line;
    site.via = at > 0 ? stack.frames[at - 1].function : "";
    auto key = std::make_tuple(site.function, site.file, site.line, site.via);
    auto [it, added] = by_place_.try_emplace(key, static_cast<uint32_t>(sites_.size()));
    if (added) sites_.push_back(std::move(site));
    site_frame_.push_back(static_cast<uint32_t>(at));
    stacks_.push_back(std::move(stack));
    return nodes_.emplace(node, Node{static_cast<uint32_t>(stacks_.size() - 1), it->second})
        .first->second;
  }

  // Each site's top caller chains, from the stacks' totals.
  void addChains() {
    std::vector<std::map<std::vector<std::string>, HeapChain>> chains(sites_.size());
    for (const auto& [node, n] : nodes_) {
      const HeapStack& stack = stacks_[n.stack];
      if (stack.calls == 0) continue;
      std::vector<std::string> callers;
      // libc's start-up chain above main says nothing about where the program allocates.
      for (size_t i = site_frame_[n.stack] + 1;
           i < stack.frames.size() && callers.size() < options_.chain_depth &&
           !IsStartupFunction(stack.frames[i].function);
           ++i)
        callers.push_back(FrameText(stack.frames[i]));
      if (callers.empty()) continue;
      HeapChain& chain = chains[n.site][callers];
      chain.frames = callers;
      chain.calls += stack.calls;
      chain.bytes += stack.bytes;
    }
    for (size_t s = 0; s < sites_.size(); ++s) {
      for (auto& [frames, chain] : chains[s]) sites_[s].chains.push_back(std::move(chain));
      auto& list = sites_[s].chains;
      std::sort(list.begin(), list.end(), [](const HeapChain& a, const HeapChain& b) {
        return a.bytes != b.bytes ? a.bytes > b.bytes : a.frames < b.frames;
      });
      if (list.size() > options_.chains) list.resize(options_.chains);
    }
  }

  std::vector<std::string> stackText(uint32_t stack) const {
    std::vector<std::string> lines;
    for (const HeapFrame& f : stacks_[stack].frames) lines.push_back(FrameText(f));
    return lines;
  }

  std::vector<HeapSite>& sites() { return sites_; }
  std::vector<HeapStack>& stacks() { return stacks_; }

 private:
  // The frames of one return address, innermost first (inlined functions each a frame).
  const std::vector<HeapFrame>& describe(uint64_t address, uint64_t time) {
    auto found = frames_.find(address);
    if (found != frames_.end()) return found->second;
    std::vector<HeapFrame> frames;
    const format::RawModule* module = address ? raw_.moduleAt(address, time) : nullptr;
    if (!module) {
      frames.push_back(HeapFrame{"[unknown]", "", 0, address, false, "", 0});
    } else {
      bool system_module = IsSystemModule(module->path);
      symbolize::ModuleInfo info{module->path, module->build_id, module->bias};
      const symbolize::ResolvedAddress& r = resolver_.resolve(info, address, true);
      for (const symbolize::ResolvedFrame& f : r.frames) {
        bool system =
            f.file.empty() || !f.file.starts_with('/') ? system_module : IsSystemSource(f.file);
        frames.push_back(HeapFrame{f.function.empty() ? "[unknown]" : f.function, f.file, f.line,
                                   address, system, f.decl_file, f.decl_line});
      }
      if (frames.empty())
        frames.push_back(HeapFrame{"[" + module->path.substr(module->path.rfind('/') + 1) + "]", "",
                                   0, address, system_module, "", 0});
    }
    return frames_.emplace(address, std::move(frames)).first->second;
  }

  const format::RawProfile& raw_;
  AddressResolver& resolver_;
  const HeapOptions& options_;
  std::vector<HeapSite> sites_;
  std::vector<HeapStack> stacks_;
  std::vector<uint32_t> site_frame_;  // by stack: the index of its site's frame
  std::unordered_map<uint64_t, Node> nodes_;
  std::unordered_map<uint64_t, std::vector<HeapFrame>> frames_;  // by return address
  std::map<std::tuple<std::string, std::string, uint32_t, std::string>, uint32_t> by_place_;
};

// The index of the power-of-two size class of `size` among 0, 1, 2, 4, ...: 0 for 0, else the
// bit width of size.
unsigned SizeClassIndex(uint64_t size) {
  return size == 0 ? 0u : 64u - unsigned(__builtin_clzll(size));
}

constexpr char kNoHeapRecords[] =
    "the profile has no heap records (record with hotline record --heap)";

// A map from a 64-bit key (an address, a thread id, a stack node) to `Value`, by open
// addressing with linear probing: the replay looks one up for every event, and a map of nodes
// would allocate one for every block. Holds at most half its slots; never shrinks.
template <typename Value>
class FlatMap {
 public:
  static constexpr size_t kNone = ~size_t(0);

  FlatMap() { resize(16); }

  // The slot of `key`, or kNone.
  size_t find(uint64_t key) const {
    for (size_t i = home(key);; i = next(i)) {
      const Slot& s = slots_[i];
      if (!s.used) return kNone;
      if (s.key == key) return i;
    }
  }
  // Starts loading the slot where a look-up of `key` begins: a table larger than the caches
  // then costs no wait when the look-up comes.
  void prefetch(uint64_t key) const { __builtin_prefetch(&slots_[home(key)]); }

  // The value in a slot, valid until the next insert or erase.
  Value& at(size_t slot) { return slots_[slot].value; }

  // The slot of `key`, whose value is value-initialised when it is new; and whether it is.
  std::pair<size_t, bool> insert(uint64_t key) {
    if ((count_ + 1) * 2 > slots_.size()) resize(slots_.size() * 2);
    for (size_t i = home(key);; i = next(i)) {
      Slot& s = slots_[i];
      if (!s.used) {
        s = Slot{key, true, Value{}};
        ++count_;
        return {i, true};
      }
      if (s.key == key) return {i, false};
    }
  }

  // Empties a slot, moving back the entries after it that probed past it.
  void erase(size_t hole) {
    for (size_t j = next(hole); slots_[j].used; j = next(j)) {
      size_t h = home(slots_[j].key);
      // The entry at j stays when its home lies cyclically in (hole, j].
      bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
      if (stays) continue;
      slots_[hole] = slots_[j];
      hole = j;
    }
    slots_[hole].used = false;
    --count_;
  }

  template <typename Visit>
  void forEach(Visit visit) const {
    for (const Slot& s : slots_)
      if (s.used) visit(s.key, s.value);
  }

 private:
  struct Slot {
    uint64_t key = 0;
    bool used = false;
    Value value{};
  };

  size_t home(uint64_t key) const {
    return size_t((key * 0x9E3779B97F4A7C15ull) >> shift_);  // Fibonacci hashing
  }
  size_t next(size_t i) const { return (i + 1) & mask_; }

  void resize(size_t size) {  // a power of two
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(size, Slot{});
    mask_ = size - 1;
    shift_ = 64u - unsigned(__builtin_ctzll(size));
    count_ = 0;
    for (const Slot& s : old)
      if (s.used) at(insert(s.key).first) = s.value;
  }

  std::vector<Slot> slots_;
  size_t count_ = 0, mask_ = 0;
  unsigned shift_ = 60;
};

// The timeline keeps every `step`-th event's point, and when it holds this many, every other
// one, doubling the step: between half this and this many points, however many events.
constexpr size_t kHeapTimelinePoints = 1024;

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

  void allocate(const format::AllocRecord& a) {
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

  void deallocate(const format::FreeRecord& f) {
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

  // `sample_bytes`: the STATS record heap_sample_bytes, 0 when there is none.
  HeapProfile finish(uint64_t sample_bytes) {
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

 private:
  // A block that was live at the peak and has been released since.
  struct Released {
    double bytes, calls;
    uint32_t stack;
  };

  // The index of stack `node`, by first use; its first use's time symbolizes it (moduleAt).
  uint32_t stackOf(uint64_t node, uint64_t time) {
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

  // Takes a block's release into account (the caller forgets it).
  void released(const Live& block) {
    if (block.mmap) return;
    current_ -= block.bytes();
    if (peak_ > 0 && block.event <= peak_event_)
      released_since_peak_.push_back(Released{block.bytes(), block.calls, block.stack});
  }

  // After an event that changed the live heap: a point of the timeline, every so many events.
  void point(uint64_t time) {
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

  // Every other point of the timeline: those at a multiple of twice the step.
  void thinTimeline() {
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

// ---- Reading a file: the events put back into the program's order as they arrive. ----

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
    uint64_t sample_bytes = 0;
    for (const auto& [key, value] : stats)
      if (key == "heap_sample_bytes") sample_bytes = value;
    return replay_.finish(sample_bytes);
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

  uint64_t sample_bytes = 0;
  for (const auto& [key, value] : raw.stats)
    if (key == "heap_sample_bytes") sample_bytes = value;
  HeapReplay replay(raw, resolver, options);
  for (const Event& ev : events) {
    if (ev.is_alloc) {
      replay.allocate(raw.allocs[ev.index]);
    } else {
      replay.deallocate(raw.frees[ev.index]);
    }
  }
  return replay.finish(sample_bytes);
}

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

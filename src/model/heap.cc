#include "model/heap.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "model/system_code.h"

namespace hotline::model {
namespace {

using format::AllocKind;
using format::FreeKind;

// A block allocated and not yet released.
struct Live {
  uint64_t size;
  double calls, bytes;  // what the block stands for: 1 and size unless it was sampled
  uint32_t stack;       // the allocation's stack node, by first use (HeapReplay)
  bool mmap;
  uint64_t event;  // the index, in the program's order, of the event that allocated it
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

uint64_t SizeClass(uint64_t size) {
  if (size == 0) return 0;
  uint64_t c = 1;
  while (c <= size / 2) c <<= 1;
  return c;
}

constexpr char kNoHeapRecords[] =
    "the profile has no heap records (record with hotline record --heap)";

// What the replay needs to know before the first event.
struct HeapPlan {
  uint64_t events = 0;        // ALLOC and FREE records
  uint64_t start = 0;         // the earliest event's time: the timeline's zero
  uint64_t sample_bytes = 0;  // the STATS record heap_sample_bytes; 0 when there is none
};

// Replays the heap events one by one in the program's order: by time, a release before an
// allocation at the same time (the runtime stamps a release before the block can be reused),
// else in file order. Keeps the live blocks, sums per stack node and per thread its last
// allocation; never an event once it has been applied. Stacks are symbolized and grouped into
// sites only at the end, with every module and stack node of the file known, so a reading
// that streams gets the same frames as one that read everything first.
class HeapReplay {
 public:
  HeapReplay(const format::RawProfile& raw, AddressResolver& resolver, const HeapOptions& options,
             const HeapPlan& plan)
      : sites_(raw, resolver, options),
        plan_(plan),
        timeline_step_(std::max<uint64_t>(1, plan.events / 1000)) {
    heap_.sample_bytes = plan.sample_bytes;
  }

  // How many events were applied.
  uint64_t applied() const { return event_; }

  void allocate(const format::AllocRecord& a) {
    forget(a.address);  // a block allocated again without a release we saw: it was freed
    bool mmap = a.kind == AllocKind::kMmap;
    uint32_t stack = stackOf(a.node, a.time);
    double weight = SampleWeight(a.size, a.sample_bytes);
    double bytes = weight * double(a.size);
    if (a.sample_bytes) {
      if (!heap_.sample_bytes) heap_.sample_bytes = a.sample_bytes;
      if (!mmap) {
        ++heap_.sampled_calls;
        variance_ += bytes * bytes * (1.0 - 1.0 / weight);  // size² (1 − p) / p²
      }
    }
    live_[a.address] = Live{a.size, weight, bytes, stack, mmap, event_};
    if (mmap) {
      mmap_calls_ += weight;
      mmap_bytes_ += bytes;
    } else {
      alloc_calls_ += weight;
      total_bytes_ += bytes;
      current_ += bytes;
      stack_sums_[stack].calls += weight;
      stack_sums_[stack].bytes += bytes;
      histogram_[SizeClass(a.size)] += weight;
      last_alloc_of_thread_[a.tid] = a.address;
      if (current_ > peak_) {
        peak_ = current_;
        heap_.peak_time_ns = a.time - plan_.start;
        peak_event_ = event_;
        released_since_peak_.clear();  // all were released before this peak
      }
    }
    point(a.time);
  }

  void deallocate(const format::FreeRecord& f) {
    auto it = live_.find(f.address);
    if (it == live_.end()) {
      if (f.kind != FreeKind::kRealloc) ++heap_.unknown_frees;
      ++event_;
      return;
    }
    if (it->second.mmap) {
      if (f.kind == FreeKind::kMunmap) munmap_calls_ += it->second.calls;
      forget(f.address);
      ++event_;
      return;
    }
    if (f.kind != FreeKind::kRealloc) free_calls_ += it->second.calls;
    // Whether other allocations came between cannot be told from samples.
    auto last = last_alloc_of_thread_.find(f.tid);
    if (!heap_.sample_bytes && last != last_alloc_of_thread_.end() && last->second == f.address &&
        f.kind != FreeKind::kRealloc) {
      ++heap_.temporary_calls;
      ++stack_sums_[it->second.stack].temporary_calls;
    }
    if (last != last_alloc_of_thread_.end()) last->second = 0;
    forget(f.address);
    point(f.time);
  }

  HeapProfile finish() {
    HeapProfile& heap = heap_;
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
    for (const auto& [address, block] : live_) {
      if (block.mmap) {
        mmap_leaked_bytes += block.bytes;
        continue;
      }
      leaked_calls += block.calls;
      leaked_bytes += block.bytes;
      site_sums[site_of[block.stack]].leaked_calls += block.calls;
      site_sums[site_of[block.stack]].leaked_bytes += block.bytes;
      stack_sums_[block.stack].live_calls += block.calls;
      stack_sums_[block.stack].live_bytes += block.bytes;
      LeakSums& leak = leaks_by_stack[block.stack];
      leak.calls += block.calls;
      leak.bytes += block.bytes;
    }
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
      for (const auto& [address, block] : live_)
        if (!block.mmap && block.event <= peak_event_) add(block.stack, block.bytes, block.calls);
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
    for (const auto& [size_class, calls] : histogram_)
      heap.size_histogram.emplace_back(size_class, Round(calls));
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
    auto [it, added] = stack_index_.try_emplace(node, uint32_t(first_use_.size()));
    if (added) {
      first_use_.emplace_back(node, time);
      stack_sums_.emplace_back();
    }
    return it->second;
  }

  // Forgets the live block at `address`, if there is one.
  void forget(uint64_t address) {
    auto it = live_.find(address);
    if (it == live_.end()) return;
    const Live& block = it->second;
    if (!block.mmap) {
      current_ -= block.bytes;
      if (peak_ > 0 && block.event <= peak_event_)
        released_since_peak_.push_back(Released{block.bytes, block.calls, block.stack});
    }
    live_.erase(it);
  }

  // After an event that changed the live heap: a point of the timeline, every so many events.
  void point(uint64_t time) {
    if (event_ % timeline_step_ == 0 || event_ + 1 == plan_.events)
      heap_.timeline.push_back(HeapPoint{time - plan_.start, Round(current_)});
    ++event_;
  }

  SiteTable sites_;
  HeapPlan plan_;
  uint64_t timeline_step_;
  HeapProfile heap_;
  uint64_t event_ = 0;                                    // the index of the next event
  std::unordered_map<uint64_t, uint32_t> stack_index_;    // stack node → index
  std::vector<std::pair<uint64_t, uint64_t>> first_use_;  // by index: node, time
  std::vector<StackSums> stack_sums_;                     // by index
  std::unordered_map<uint64_t, Live> live_;
  std::unordered_map<uint64_t, uint64_t> last_alloc_of_thread_;  // tid → address, 0 once used
  std::map<uint64_t, double> histogram_;
  double alloc_calls_ = 0, total_bytes_ = 0, free_calls_ = 0, mmap_calls_ = 0, mmap_bytes_ = 0;
  double munmap_calls_ = 0, current_ = 0, peak_ = 0, variance_ = 0;
  uint64_t peak_event_ = 0;
  std::vector<Released> released_since_peak_;  // at most the blocks live at the peak
};

// ---- Reading a file: the events put back into the program's order as they arrive. ----

// Events are grouped, in file order, in blocks of this many: the first reading notes each
// block's earliest time, and after each block of the second the events earlier than every
// later block's can be applied.
constexpr uint64_t kBlockEvents = 4096;

// The first reading: how many events, from when, and how late in the file an early one comes.
class HeapPlanner : public format::RecordVisitor {
 public:
  void onString(const format::StringRecord& r) override {
    // A STATS key is a string id; only heap_sample_bytes matters here.
    if (std::string_view(r.text, r.size) == "heap_sample_bytes") {
      sample_bytes_keys_.insert(r.id);
    } else {
      sample_bytes_keys_.erase(r.id);
    }
  }
  void onStats(const format::StatsRecord& r) override {
    if (sample_bytes_keys_.count(r.key)) plan_.sample_bytes = r.value;
  }
  void onAlloc(const format::AllocRecord& r) override { add(r.time); }
  void onFree(const format::FreeRecord& r) override { add(r.time); }

  const HeapPlan& plan() const { return plan_; }
  // For each block, the earliest time of all the blocks after it (none: the largest time).
  std::vector<uint64_t> laterMinima() const {
    std::vector<uint64_t> later(earliest_.size(), std::numeric_limits<uint64_t>::max());
    for (size_t k = earliest_.size(); k-- > 1;) later[k - 1] = std::min(later[k], earliest_[k]);
    return later;
  }

 private:
  void add(uint64_t time) {
    if (plan_.events % kBlockEvents == 0) {
      earliest_.push_back(time);
    } else {
      earliest_.back() = std::min(earliest_.back(), time);
    }
    plan_.start = plan_.events == 0 ? time : std::min(plan_.start, time);
    ++plan_.events;
  }

  HeapPlan plan_;
  std::vector<uint64_t> earliest_;  // by block
  std::unordered_set<uint64_t> sample_bytes_keys_;
};

// The second reading: a RawProfile that keeps what resolves stacks (modules, stack nodes,
// strings, threads) but not the events, each held only until its place in the program's order
// is certain, then applied. The runtime's per-thread rings write each thread's events in time
// order but interleave threads up to a drain of the rings apart; the first reading's block
// minima say when nothing earlier can follow.
class HeapStream : public format::RawProfile {
 public:
  HeapStream(AddressResolver& resolver, const HeapOptions& options, const HeapPlan& plan,
             std::vector<uint64_t> later_minima)
      : replay_(*this, resolver, options, plan),
        plan_(plan),
        later_minima_(std::move(later_minima)) {}

  void onAlloc(const format::AllocRecord& r) override { hold(Pending{r.time, true, read_, r}); }
  void onFree(const format::FreeRecord& r) override { hold(Pending{r.time, false, read_, r}); }
  // Records the heap has no use for, whose number grows with the run.
  void onSample(const format::SampleRecord&) override {}
  void onTraceEvents(const format::TraceEventsRecord&) override {}
  void onWatchHits(const format::WatchHitsRecord&) override {}
  void onSize(const format::SizeRecord&) override {}

  // After the reading: applies what is still held and gives the heap.
  Expected<HeapProfile> finish() {
    applyBefore(std::numeric_limits<uint64_t>::max(), true);
    if (!in_order_ || read_ != plan_.events || replay_.applied() != plan_.events)
      return Status::Error("the file changed while it was read (" + std::to_string(plan_.events) +
                           " heap events at the first reading, " + std::to_string(read_) +
                           " at the second)");
    return replay_.finish();
  }

 private:
  struct Pending {
    uint64_t time;
    bool is_alloc;
    uint64_t index;  // in file order
    std::variant<format::AllocRecord, format::FreeRecord> record;
  };
  static bool Before(const Pending& a, const Pending& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.is_alloc != b.is_alloc) return !a.is_alloc;
    return a.index < b.index;
  }

  void hold(const Pending& event) {
    held_.push_back(event);
    ++read_;
    if (read_ % kBlockEvents == 0) {
      size_t block = read_ / kBlockEvents - 1;
      // A file longer than at its first reading: hold on (finish() says what happened).
      applyBefore(block < later_minima_.size() ? later_minima_[block] : 0, false);
    }
  }

  // Applies, in order, the held events earlier than `time` (all of them when `all`).
  void applyBefore(uint64_t time, bool all) {
    auto fresh = held_.begin() + static_cast<std::ptrdiff_t>(sorted_);
    std::sort(fresh, held_.end(), Before);
    std::inplace_merge(held_.begin(), fresh, held_.end(), Before);
    auto end = all ? held_.end()
                   : std::partition_point(held_.begin(), held_.end(),
                                          [&](const Pending& p) { return p.time < time; });
    for (auto it = held_.begin(); it != end; ++it) {
      if (applied_any_ && Before(*it, last_)) in_order_ = false;
      if (it->is_alloc) {
        replay_.allocate(std::get<format::AllocRecord>(it->record));
      } else {
        replay_.deallocate(std::get<format::FreeRecord>(it->record));
      }
      last_ = *it;
      applied_any_ = true;
    }
    held_.erase(held_.begin(), end);
    sorted_ = held_.size();
  }

  HeapReplay replay_;
  HeapPlan plan_;
  std::vector<uint64_t> later_minima_;
  std::vector<Pending> held_;  // the first sorted_ in the program's order, the rest as read
  size_t sorted_ = 0;
  uint64_t read_ = 0;
  Pending last_{};  // the last event applied
  bool applied_any_ = false, in_order_ = true;
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

  HeapPlan plan;
  plan.events = events.size();
  plan.start = events.front().time;
  for (const auto& [key, value] : raw.stats)
    if (key == "heap_sample_bytes") plan.sample_bytes = value;
  HeapReplay replay(raw, resolver, options, plan);
  for (const Event& ev : events) {
    if (ev.is_alloc) {
      replay.allocate(raw.allocs[ev.index]);
    } else {
      replay.deallocate(raw.frees[ev.index]);
    }
  }
  return replay.finish();
}

Expected<HeapLoad> LoadHeapProfile(const std::string& path, AddressResolver& resolver,
                                   const HeapOptions& options) {
  HeapPlanner planner;
  format::ReadStats stats;
  Status read = format::ReadProfileFile(path, planner, &stats);
  if (!read.ok()) return read;
  if (planner.plan().events == 0) return HeapLoad{Status::Error(kNoHeapRecords), stats};
  HeapStream stream(resolver, options, planner.plan(), planner.laterMinima());
  read = format::ReadProfileFile(path, stream, &stats);
  if (!read.ok()) return read;
  return HeapLoad{stream.finish(), std::move(stats)};
}

}  // namespace hotline::model

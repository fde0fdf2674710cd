#include "model/heap.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <unordered_map>

#include "model/system_code.h"

namespace hotline::model {
namespace {

using format::AllocKind;
using format::FreeKind;

// One heap event in the order the program did them: by time, a release before an allocation
// at the same time (the runtime stamps a release before the block can be reused).
struct Event {
  uint64_t time;
  bool is_alloc;
  size_t index;  // into raw.allocs or raw.frees
};

struct Live {
  uint64_t size;
  double calls, bytes;  // what the block stands for: 1 and size unless it was sampled
  uint32_t site;
  uint32_t stack;
  bool mmap;
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
};
struct StackSums {
  double calls = 0, bytes = 0, live_calls = 0, live_bytes = 0;
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

}  // namespace

Expected<HeapProfile> BuildHeapProfile(const format::RawProfile& raw, AddressResolver& resolver,
                                       const HeapOptions& options) {
  if (raw.allocs.empty() && raw.frees.empty())
    return Status::Error("the profile has no heap records (record with hotline record --heap)");

  std::vector<Event> events;
  events.reserve(raw.allocs.size() + raw.frees.size());
  for (size_t i = 0; i < raw.allocs.size(); ++i) events.push_back({raw.allocs[i].time, true, i});
  for (size_t i = 0; i < raw.frees.size(); ++i) events.push_back({raw.frees[i].time, false, i});
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    if (a.time != b.time) return a.time < b.time;
    return !a.is_alloc && b.is_alloc;
  });
  uint64_t start = events.front().time;

  HeapProfile heap;
  for (const auto& [key, value] : raw.stats)
    if (key == "heap_sample_bytes") heap.sample_bytes = value;
  SiteTable sites(raw, resolver, options);
  std::vector<SiteSums> site_sums;
  std::vector<StackSums> stack_sums;
  std::unordered_map<uint64_t, Live> live;
  std::unordered_map<uint64_t, uint64_t> last_alloc_of_thread;  // tid → address, 0 once used
  std::map<uint64_t, double> histogram;
  double alloc_calls = 0, total_bytes = 0, free_calls = 0, mmap_calls = 0, mmap_bytes = 0;
  double munmap_calls = 0, current = 0, peak = 0, variance = 0;
  size_t peak_event = 0;
  uint64_t timeline_step = std::max<uint64_t>(1, events.size() / 1000);

  auto release = [&](uint64_t address) {
    auto it = live.find(address);
    if (it == live.end()) return false;
    if (!it->second.mmap) current -= it->second.bytes;
    live.erase(it);
    return true;
  };

  for (size_t e = 0; e < events.size(); ++e) {
    const Event& ev = events[e];
    if (ev.is_alloc) {
      const format::AllocRecord& a = raw.allocs[ev.index];
      release(a.address);  // a block allocated again without a release we saw: it was freed
      bool mmap = a.kind == AllocKind::kMmap;
      const SiteTable::Node& node = sites.of(a.node, a.time);
      uint32_t site = node.site;
      if (site_sums.size() <= site) site_sums.resize(site + 1);
      if (stack_sums.size() <= node.stack) stack_sums.resize(node.stack + 1);
      double weight = SampleWeight(a.size, a.sample_bytes);
      double bytes = weight * double(a.size);
      if (a.sample_bytes) {
        if (!heap.sample_bytes) heap.sample_bytes = a.sample_bytes;
        if (!mmap) {
          ++heap.sampled_calls;
          variance += bytes * bytes * (1.0 - 1.0 / weight);  // size² (1 − p) / p²
        }
      }
      live[a.address] = Live{a.size, weight, bytes, site, node.stack, mmap};
      if (mmap) {
        mmap_calls += weight;
        mmap_bytes += bytes;
      } else {
        alloc_calls += weight;
        total_bytes += bytes;
        current += bytes;
        site_sums[site].calls += weight;
        site_sums[site].bytes += bytes;
        stack_sums[node.stack].calls += weight;
        stack_sums[node.stack].bytes += bytes;
        histogram[SizeClass(a.size)] += weight;
        last_alloc_of_thread[a.tid] = a.address;
        if (current > peak) {
          peak = current;
          heap.peak_time_ns = a.time - start;
          peak_event = e;
        }
      }
    } else {
      const format::FreeRecord& f = raw.frees[ev.index];
      auto it = live.find(f.address);
      if (it == live.end()) {
        if (f.kind != FreeKind::kRealloc) ++heap.unknown_frees;
        continue;
      }
      if (it->second.mmap) {
        if (f.kind == FreeKind::kMunmap) munmap_calls += it->second.calls;
        release(f.address);
        continue;
      }
      if (f.kind != FreeKind::kRealloc) free_calls += it->second.calls;
      // Whether other allocations came between cannot be told from samples.
      auto last = last_alloc_of_thread.find(f.tid);
      if (!heap.sample_bytes && last != last_alloc_of_thread.end() && last->second == f.address &&
          f.kind != FreeKind::kRealloc) {
        ++heap.temporary_calls;
        ++sites.sites()[it->second.site].temporary_calls;
      }
      if (last != last_alloc_of_thread.end()) last->second = 0;
      release(f.address);
    }
    if (e % timeline_step == 0 || e + 1 == events.size())
      heap.timeline.push_back(HeapPoint{events[e].time - start, Round(current)});
  }

  // Leaks: what is still live, per site and per full stack.
  struct LeakSums {
    double calls = 0, bytes = 0;
  };
  std::unordered_map<uint32_t, LeakSums> leaks_by_stack;
  double leaked_calls = 0, leaked_bytes = 0, mmap_leaked_bytes = 0;
  for (const auto& [address, block] : live) {
    if (block.mmap) {
      mmap_leaked_bytes += block.bytes;
      continue;
    }
    leaked_calls += block.calls;
    leaked_bytes += block.bytes;
    site_sums[block.site].leaked_calls += block.calls;
    site_sums[block.site].leaked_bytes += block.bytes;
    stack_sums[block.stack].live_calls += block.calls;
    stack_sums[block.stack].live_bytes += block.bytes;
    LeakSums& leak = leaks_by_stack[block.stack];
    leak.calls += block.calls;
    leak.bytes += block.bytes;
  }
  for (auto& [stack, sums] : leaks_by_stack) {
    HeapLeak leak;
    leak.calls = Round(sums.calls);
    leak.bytes = Round(sums.bytes);
    leak.stack = sites.stackText(stack);
    heap.leaks.push_back(std::move(leak));
  }
  std::sort(heap.leaks.begin(), heap.leaks.end(), [](const HeapLeak& a, const HeapLeak& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.stack < b.stack;
  });

  // Peak contribution per site: replay up to the event that reached the peak.
  if (peak > 0) {
    struct AtPeak {
      double bytes, weight;
      uint32_t site;
    };
    std::unordered_map<uint64_t, AtPeak> at_peak;
    for (size_t e = 0; e <= peak_event; ++e) {
      const Event& ev = events[e];
      if (ev.is_alloc) {
        const format::AllocRecord& a = raw.allocs[ev.index];
        if (a.kind == AllocKind::kMmap) continue;
        double weight = SampleWeight(a.size, a.sample_bytes);
        at_peak[a.address] = {weight * double(a.size), weight, sites.of(a.node, a.time).site};
      } else {
        at_peak.erase(raw.frees[ev.index].address);
      }
    }
    double peak_variance = 0;
    for (const auto& [address, block] : at_peak) {
      site_sums[block.site].peak_bytes += block.bytes;
      peak_variance += block.bytes * block.bytes * (1.0 - 1.0 / block.weight);
    }
    heap.peak_bytes_error = Round(std::sqrt(peak_variance));
  }

  for (size_t i = 0; i < site_sums.size(); ++i) {
    HeapSite& s = sites.sites()[i];
    s.calls = Round(site_sums[i].calls);
    s.bytes = Round(site_sums[i].bytes);
    s.peak_bytes = Round(site_sums[i].peak_bytes);
    s.leaked_calls = Round(site_sums[i].leaked_calls);
    s.leaked_bytes = Round(site_sums[i].leaked_bytes);
  }
  for (size_t i = 0; i < stack_sums.size(); ++i) {
    HeapStack& stack = sites.stacks()[i];
    stack.calls = Round(stack_sums[i].calls);
    stack.bytes = Round(stack_sums[i].bytes);
    stack.live_calls = Round(stack_sums[i].live_calls);
    stack.live_bytes = Round(stack_sums[i].live_bytes);
  }
  heap.peak_bytes = Round(peak);
  heap.total_bytes = Round(total_bytes);
  heap.alloc_calls = Round(alloc_calls);
  heap.free_calls = Round(free_calls);
  heap.leaked_calls = Round(leaked_calls);
  heap.leaked_bytes = Round(leaked_bytes);
  heap.mmap_calls = Round(mmap_calls);
  heap.mmap_bytes = Round(mmap_bytes);
  heap.munmap_calls = Round(munmap_calls);
  heap.mmap_leaked_bytes = Round(mmap_leaked_bytes);
  heap.total_bytes_error = Round(std::sqrt(variance));

  sites.addChains();
  heap.sites = std::move(sites.sites());
  heap.stacks = std::move(sites.stacks());
  for (const auto& [size_class, calls] : histogram)
    heap.size_histogram.emplace_back(size_class, Round(calls));
  return heap;
}

}  // namespace hotline::model

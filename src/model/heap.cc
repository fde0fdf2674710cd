#include "model/heap.h"

#include <algorithm>
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
  uint32_t site;
  uint32_t stack;
  bool mmap;
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
  SiteTable sites(raw, resolver, options);
  std::unordered_map<uint64_t, Live> live;
  std::unordered_map<uint64_t, uint64_t> last_alloc_of_thread;  // tid → address, 0 once used
  std::map<uint64_t, uint64_t> histogram;
  uint64_t current = 0;
  size_t peak_event = 0;
  uint64_t timeline_step = std::max<uint64_t>(1, events.size() / 1000);

  auto release = [&](uint64_t address) {
    auto it = live.find(address);
    if (it == live.end()) return false;
    if (!it->second.mmap) current -= it->second.size;
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
      live[a.address] = Live{a.size, site, node.stack, mmap};
      if (mmap) {
        ++heap.mmap_calls;
        heap.mmap_bytes += a.size;
      } else {
        ++heap.alloc_calls;
        heap.total_bytes += a.size;
        current += a.size;
        HeapSite& s = sites.sites()[site];
        ++s.calls;
        s.bytes += a.size;
        HeapStack& stack = sites.stacks()[node.stack];
        ++stack.calls;
        stack.bytes += a.size;
        ++histogram[SizeClass(a.size)];
        last_alloc_of_thread[a.tid] = a.address;
        if (current > heap.peak_bytes) {
          heap.peak_bytes = current;
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
        if (f.kind == FreeKind::kMunmap) ++heap.munmap_calls;
        release(f.address);
        continue;
      }
      if (f.kind != FreeKind::kRealloc) ++heap.free_calls;
      auto last = last_alloc_of_thread.find(f.tid);
      if (last != last_alloc_of_thread.end() && last->second == f.address &&
          f.kind != FreeKind::kRealloc) {
        ++heap.temporary_calls;
        ++sites.sites()[it->second.site].temporary_calls;
      }
      if (last != last_alloc_of_thread.end()) last->second = 0;
      release(f.address);
    }
    if (e % timeline_step == 0 || e + 1 == events.size())
      heap.timeline.push_back(HeapPoint{events[e].time - start, current});
  }

  // Leaks: what is still live, per site and per full stack.
  std::unordered_map<uint32_t, HeapLeak> leaks_by_stack;
  for (const auto& [address, block] : live) {
    if (block.mmap) {
      heap.mmap_leaked_bytes += block.size;
      continue;
    }
    ++heap.leaked_calls;
    heap.leaked_bytes += block.size;
    HeapSite& s = sites.sites()[block.site];
    ++s.leaked_calls;
    s.leaked_bytes += block.size;
    HeapStack& stack = sites.stacks()[block.stack];
    ++stack.live_calls;
    stack.live_bytes += block.size;
    HeapLeak& leak = leaks_by_stack[block.stack];
    ++leak.calls;
    leak.bytes += block.size;
  }
  for (auto& [stack, leak] : leaks_by_stack) {
    leak.stack = sites.stackText(stack);
    heap.leaks.push_back(std::move(leak));
  }
  std::sort(heap.leaks.begin(), heap.leaks.end(),
            [](const HeapLeak& a, const HeapLeak& b) { return a.bytes > b.bytes; });

  // Peak contribution per site: replay up to the event that reached the peak.
  if (heap.peak_bytes > 0) {
    std::unordered_map<uint64_t, std::pair<uint64_t, uint32_t>> at_peak;  // address → size, site
    for (size_t e = 0; e <= peak_event; ++e) {
      const Event& ev = events[e];
      if (ev.is_alloc) {
        const format::AllocRecord& a = raw.allocs[ev.index];
        if (a.kind == AllocKind::kMmap) continue;
        at_peak[a.address] = {a.size, sites.of(a.node, a.time).site};
      } else {
        at_peak.erase(raw.frees[ev.index].address);
      }
    }
    for (const auto& [address, block] : at_peak)
      sites.sites()[block.second].peak_bytes += block.first;
  }

  sites.addChains();
  heap.sites = std::move(sites.sites());
  heap.stacks = std::move(sites.stacks());
  for (const auto& [size_class, calls] : histogram)
    heap.size_histogram.emplace_back(size_class, calls);
  return heap;
}

}  // namespace hotline::model

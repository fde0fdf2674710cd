#include "model/heap.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

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
  uint64_t node;
  bool mmap;
};

class SiteTable {
 public:
  SiteTable(const format::RawProfile& raw, AddressResolver& resolver)
      : raw_(raw), resolver_(resolver) {}

  // The site of a stack node: its innermost frame, the return address into the allocator's
  // caller.
  uint32_t siteOf(uint64_t node, uint64_t time) {
    auto found = by_node_.find(node);
    if (found != by_node_.end()) return found->second;
    std::vector<uint64_t> frames = raw_.stack(node);
    HeapSite site = describe(frames.empty() ? 0 : frames[0], time);
    auto key = std::make_tuple(site.function, site.file, site.line);
    auto [it, added] = by_place_.try_emplace(key, static_cast<uint32_t>(sites_.size()));
    if (added) sites_.push_back(site);
    by_node_[node] = it->second;
    return it->second;
  }

  std::vector<std::string> stackText(uint64_t node, uint64_t time) {
    std::vector<std::string> lines;
    for (uint64_t address : raw_.stack(node)) {
      HeapSite f = describe(address, time);
      lines.push_back(f.file.empty()
                          ? f.function
                          : f.function + " (" + f.file + ":" + std::to_string(f.line) + ")");
    }
    return lines;
  }

  std::vector<HeapSite>& sites() { return sites_; }

 private:
  HeapSite describe(uint64_t address, uint64_t time) {
    HeapSite site;
    site.function = "[unknown]";
    if (address == 0) return site;
    const format::RawModule* module = raw_.moduleAt(address, time);
    if (!module) return site;
    symbolize::ModuleInfo info{module->path, module->build_id, module->bias};
    const symbolize::ResolvedAddress& r = resolver_.resolve(info, address, true);
    if (r.frames.empty()) {
      std::string name = module->path.substr(module->path.rfind('/') + 1);
      site.function = "[" + name + "]";
      return site;
    }
    // The innermost frame: for inlined code the inlined function, at the line of the call.
    const symbolize::ResolvedFrame& f = r.frames.front();
    site.function = f.function.empty() ? "[unknown]" : f.function;
    site.file = f.file;
    site.line = f.line;
    return site;
  }

  const format::RawProfile& raw_;
  AddressResolver& resolver_;
  std::vector<HeapSite> sites_;
  std::unordered_map<uint64_t, uint32_t> by_node_;
  std::map<std::tuple<std::string, std::string, uint32_t>, uint32_t> by_place_;
};

uint64_t SizeClass(uint64_t size) {
  if (size == 0) return 0;
  uint64_t c = 1;
  while (c <= size / 2) c <<= 1;
  return c;
}

}  // namespace

Expected<HeapProfile> BuildHeapProfile(const format::RawProfile& raw, AddressResolver& resolver) {
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
  SiteTable sites(raw, resolver);
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
      uint32_t site = sites.siteOf(a.node, a.time);
      live[a.address] = Live{a.size, site, a.node, mmap};
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
  std::unordered_map<uint64_t, HeapLeak> leaks_by_node;
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
    HeapLeak& leak = leaks_by_node[block.node];
    ++leak.calls;
    leak.bytes += block.size;
  }
  uint64_t end_time = events.back().time;
  for (auto& [node, leak] : leaks_by_node) {
    leak.stack = sites.stackText(node, end_time);
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
        at_peak[a.address] = {a.size, sites.siteOf(a.node, a.time)};
      } else {
        at_peak.erase(raw.frees[ev.index].address);
      }
    }
    for (const auto& [address, block] : at_peak)
      sites.sites()[block.second].peak_bytes += block.first;
  }

  heap.sites = std::move(sites.sites());
  for (const auto& [size_class, calls] : histogram)
    heap.size_histogram.emplace_back(size_class, calls);
  return heap;
}

}  // namespace hotline::model

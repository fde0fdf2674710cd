// The heap page's data: live bytes over time, the peak, the sites (the program's own lines, the
// library function they called, their top caller chains), the leaks with their stacks.
#include "html/parts.h"

namespace hotline::html {

void AddHeap(const model::HeapProfile& h, nlohmann::json& data) {
  nlohmann::json timeline = nlohmann::json::array();
  for (const model::HeapPoint& point : h.timeline) timeline.push_back({point.time_ns, point.bytes});
  nlohmann::json sites = nlohmann::json::array();
  for (const model::HeapSite& s : h.sites) {
    nlohmann::json chains = nlohmann::json::array();
    for (const model::HeapChain& c : s.chains)
      chains.push_back({{"bytes", c.bytes}, {"calls", c.calls}, {"frames", c.frames}});
    sites.push_back({{"function", s.function},
                     {"via", s.via},
                     {"chains", std::move(chains)},
                     {"file", s.file},
                     {"line", s.line},
                     {"calls", s.calls},
                     {"bytes", s.bytes},
                     {"peak_bytes", s.peak_bytes},
                     {"temporary_calls", s.temporary_calls},
                     {"leaked_calls", s.leaked_calls},
                     {"leaked_bytes", s.leaked_bytes}});
  }
  nlohmann::json leaks = nlohmann::json::array();
  for (const model::HeapLeak& l : h.leaks)
    leaks.push_back({{"calls", l.calls}, {"bytes", l.bytes}, {"stack", l.stack}});
  nlohmann::json sizes = nlohmann::json::array();
  for (const auto& [size, calls] : h.size_histogram) sizes.push_back({size, calls});
  data["heap"] = {{"peak_bytes", h.peak_bytes},       {"peak_time_ns", h.peak_time_ns},
                  {"total_bytes", h.total_bytes},     {"alloc_calls", h.alloc_calls},
                  {"free_calls", h.free_calls},       {"temporary_calls", h.temporary_calls},
                  {"leaked_bytes", h.leaked_bytes},   {"leaked_calls", h.leaked_calls},
                  {"mmap_calls", h.mmap_calls},       {"mmap_bytes", h.mmap_bytes},
                  {"unknown_frees", h.unknown_frees}, {"timeline", std::move(timeline)},
                  {"sites", std::move(sites)},        {"leaks", std::move(leaks)},
                  {"sizes", std::move(sizes)}};
}

}  // namespace hotline::html

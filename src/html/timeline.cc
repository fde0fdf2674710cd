// The timeline page's data, for timed traces (--trace=timed): per thread, its calls as
// [function, start, duration, depth] (ns since the thread's first call), in a file per thread.
// Calls shorter than 1/20000 of the thread's span are left out (they would be under a pixel),
// and at most kMostCalls are kept, the longest.
#include <algorithm>

#include "html/parts.h"

namespace hotline::html {
namespace {

constexpr size_t kMostCalls = 200000;

}  // namespace

void AddTimeline(const model::Profile& p, nlohmann::json& data, ReportFiles& files) {
  if (p.calls.empty()) return;
  nlohmann::json threads = nlohmann::json::array();
  for (size_t i = 0; i < p.calls.size();) {
    uint64_t tid = p.calls[i].tid, start = p.calls[i].start_ns, end = start;
    size_t first = i;
    for (; i < p.calls.size() && p.calls[i].tid == tid; ++i) end = std::max(end, p.calls[i].end_ns);
    uint64_t span = std::max<uint64_t>(end - start, 1), shortest = span / 20000;
    std::vector<const model::TracedCall*> shown;
    for (size_t k = first; k < i; ++k)
      if (p.calls[k].end_ns - p.calls[k].start_ns >= shortest) shown.push_back(&p.calls[k]);
    if (shown.size() > kMostCalls) {
      std::nth_element(shown.begin(), shown.begin() + kMostCalls, shown.end(),
                       [](const model::TracedCall* a, const model::TracedCall* b) {
                         return a->end_ns - a->start_ns > b->end_ns - b->start_ns;
                       });
      shown.resize(kMostCalls);
    }
    nlohmann::json calls = nlohmann::json::array();
    for (const model::TracedCall* c : shown)
      calls.push_back(
          {c->function.index(), c->start_ns - start, c->end_ns - c->start_ns, c->depth});
    std::string name;
    for (const model::Thread& t : p.threads)
      if (t.tid == tid) name = t.name;
    std::string key = "timeline-" + std::to_string(tid);
    files["data/" + key + ".js"] = DataScript(key, calls);
    threads.push_back({{"tid", tid},
                       {"name", name},
                       {"span_ns", span},
                       {"calls", i - first},
                       {"shown", shown.size()},
                       {"data", key}});
  }
  data["timeline"] = std::move(threads);
}

}  // namespace hotline::html

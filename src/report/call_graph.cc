// -G: one section per function, by inclusive time. Within a section the self row and the child
// time rows add up to the section's inclusive time (the model guarantees it; loop is time that
// recursion brought back into the function and is already inside those rows).
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "report/report.h"
#include "report/text.h"

namespace hotline::report {

void PrintCallGraph(const model::Profile& p, const ReportOptions& options, std::string& out) {
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < p.functions.size(); ++i) {
    const model::Function& f = p.functions[i];
    if (f.inclusive_ns > 0 && p.percentOfTotal(f.inclusive_ns) >= options.mainCutoff())
      order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return p.functions[a].inclusive_ns > p.functions[b].inclusive_ns;
  });

  TableWriter w(p, options, out);
  const bool m = w.machine();
  w.title("graph", "Call graph (" + SampledClock(p) + ")");
  w.header({"time", "loop", "percent", "calls", "name"});
  bool first = true;
  for (uint32_t i : order) {
    const model::Function& f = p.functions[i];
    const model::FunctionId id(i);
    auto ofSection = [&](uint64_t ns) {
      return FormatPercent(100.0 * static_cast<double>(ns) / static_cast<double>(f.inclusive_ns));
    };
    if (!first) w.blank();
    first = false;
    std::string name = FunctionLabel(p, id, options);
    std::string calls = FormatCount(f.calls, f.calls_exact, m);
    if (m) {
      w.row({"function", FormatTime(f.inclusive_ns, true), "0",
             FormatPercent(p.percentOfTotal(f.inclusive_ns)), calls, calls, name});
      w.row({"self", FormatTime(f.self_ns, true), "0", ofSection(f.self_ns), calls, calls, name});
    } else {
      w.row({FormatTime(f.inclusive_ns, false), "", FormatPercent(p.percentOfTotal(f.inclusive_ns)),
             "", name});
      w.row({FormatTime(f.self_ns, false), "", ofSection(f.self_ns), calls, "  (self)"});
    }
    for (const model::CallEdge& e : p.calleesOf(id)) {
      const model::Function& child = p.function(e.child);
      std::string child_name = FunctionLabel(p, e.child, options);
      if (m) {
        w.row({"child", FormatTime(e.time_ns, true), FormatTime(e.loop_ns, true),
               ofSection(e.time_ns), fmt::format("{}", e.calls), fmt::format("{}", child.calls),
               child_name});
      } else {
        w.row({FormatTime(e.time_ns, false), e.loop_ns ? FormatTime(e.loop_ns, false) : "",
               ofSection(e.time_ns),
               // One mark for the pair: n/m is estimated unless both counts are exact.
               FormatCount(e.calls, child.calls_exact && f.calls_exact, false) +
                   fmt::format("/{}", child.calls),
               "  " + child_name});
      }
    }
  }
}

}  // namespace hotline::report

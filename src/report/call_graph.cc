// -G: one section per function, by inclusive time. Within a section the self row and the child
// time rows add up to the section's inclusive time (the model guarantees it; loop is time that
// recursion brought back into the function and is already inside those rows).
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "model/system_code.h"
#include "report/report.h"
#include "report/text.h"

namespace hotline::report {

namespace {

// libc's start-up chain above main: for people, no section of its own when it spends nothing
// itself (it still shows as main's caller).
bool StartupChain(const model::Function& f) {
  return f.self_ns == 0 && model::IsStartupFunction(f.name);
}

}  // namespace

void PrintCallGraph(const model::Profile& p, const ReportOptions& options, std::string& out) {
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < p.functions.size(); ++i) {
    const model::Function& f = p.functions[i];
    if (!options.machine && StartupChain(f)) continue;
    // A function with calls that no sample saw (traced, in one of the runs read together at
    // least) still has its calls and edges: with -p 0 it has a section too.
    bool seen = f.inclusive_ns > 0 || f.calls > 0;
    if (seen && p.percentOfTotal(f.inclusive_ns) >= options.mainCutoff()) order.push_back(i);
  }
  // Who calls each function, as gprof shows above its line: every edge, seen from its child.
  std::vector<std::vector<std::pair<model::FunctionId, const model::CallEdge*>>> callers(
      options.machine ? 0 : p.functions.size());
  for (uint32_t i = 0; i < callers.size(); ++i)
    for (const model::CallEdge& e : p.calleesOf(model::FunctionId(i)))
      callers[e.child.index()].emplace_back(model::FunctionId(i), &e);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return p.functions[a].inclusive_ns > p.functions[b].inclusive_ns;
  });

  TableWriter w(p, options, out);
  const bool m = w.machine();
  w.title("graph", "Call graph (" + SampledClock(p) +
                       (m ? ")" : "; each function's callers above it, its callees below)"));
  w.header({"time", "loop", "percent", "calls", "name"});
  bool first = true;
  for (uint32_t i : order) {
    const model::Function& f = p.functions[i];
    const model::FunctionId id(i);
    auto ofSection = [&](uint64_t ns) {
      if (f.inclusive_ns == 0) return FormatPercent(0.0);
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
      // Callers: how much of this function's time each caused, and with how many of its calls.
      for (const auto& [caller_id, e] : callers[i]) {
        const model::Function& caller = p.function(caller_id);
        w.row({FormatTime(e->time_ns, false), e->loop_ns ? FormatTime(e->loop_ns, false) : "",
               ofSection(e->time_ns),
               FormatCount(e->calls, caller.calls_exact && f.calls_exact, false) +
                   fmt::format("/{}", f.calls),
               "    " + FunctionLabel(p, caller_id, options)});
      }
      w.row({FormatTime(f.inclusive_ns, false), "", FormatPercent(p.percentOfTotal(f.inclusive_ns)),
             "", "  " + name});
      w.row({FormatTime(f.self_ns, false), "", ofSection(f.self_ns), calls, "    (self)"});
    }
    for (const model::CallEdge& e : p.calleesOf(id)) {
      const model::Function& child = p.function(e.child);
      std::string child_name = FunctionLabel(p, e.child, options);
      if (m) {
        w.row({"child", FormatTime(e.time_ns, true), FormatTime(e.loop_ns, true),
               ofSection(e.time_ns), FormatCount(e.calls, child.calls_exact && f.calls_exact, m),
               FormatCount(child.calls, child.calls_exact, m), child_name});
      } else {
        w.row({FormatTime(e.time_ns, false), e.loop_ns ? FormatTime(e.loop_ns, false) : "",
               ofSection(e.time_ns),
               // One mark for the pair: n/m is estimated unless both counts are exact.
               FormatCount(e.calls, child.calls_exact && f.calls_exact, false) +
                   fmt::format("/{}", child.calls),
               "    " + child_name});
      }
    }
  }
}

}  // namespace hotline::report

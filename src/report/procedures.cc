// -P: SOKRAT's procedure profile. Per function: module (the shared object, or the source file
// for the program itself), calls, total, self, average, shortest and longest call, self % of
// the whole run; then a bar diagram of self % and the maximum call depth. Times per call are
// exact when the program was traced in timed mode, and are then elapsed (wall-clock) time, where
// every other table shows sampled CPU time: the title says which. Otherwise (and with
// --sampled-times) total and self come from samples, the average is total / calls, and
// shortest and longest are unknown ("-", empty with -m). A counts-only profile shows the
// instructions each procedure executed instead (docs/coverage.md).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "report/names.h"
#include "report/report.h"
#include "report/text.h"

namespace hotline::report {
namespace {

struct Row {
  uint32_t fn;
  uint64_t calls, total, self, average;
  bool timed;
  uint64_t min, max;
  double self_percent;
};

std::string ModuleColumn(const model::Profile& p, const model::Function& f) {
  const model::Module& m = p.module(f.module);
  if (m.pseudo == model::PseudoKind::kNone && m.path == p.summary.exe && f.file.valid()) {
    const std::string& path = p.file(f.file).path;
    return path.substr(path.rfind('/') + 1);
  }
  return m.name;
}

}  // namespace

namespace {

// A counts-only profile's procedures: the instructions each executed (counted from the block
// counters, or weighed), with its callees from the call graph's linear system, per call, and
// its share; no time was measured, so no shortest or longest call.
void PrintProcedureCosts(const model::Profile& p, const ReportOptions& options, std::string& out) {
  const model::CostModel& costs = *options.costs;
  std::map<std::string, const model::Function*> by_name;
  for (const model::Function& f : p.functions) by_name.emplace(f.name, &f);
  std::vector<const model::FunctionCost*> rows;
  for (const model::FunctionCost& c : costs.functions) {
    double share = costs.total > 0 ? 100.0 * c.explicit_cost / costs.total : 0;
    if ((c.calls || c.implicit_cost > 0) && share >= options.otherCutoff()) rows.push_back(&c);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
    return a->explicit_cost > b->explicit_cost;
  });
  TableWriter w(p, options, out);
  w.title("procedures",
          costs.counted
              ? "Procedures (instructions executed, counted from the block counters; total: with "
                "the callees, from the call graph's linear system; +: blocks the counters do not "
                "determine may add some)"
              : "Procedures (cost = executions × instructions; total: with the callees, from "
                "the call graph's linear system)");
  w.header({"calls", "total", "self", "average", "self %", "module", "function"});
  auto share = [&](double cost) { return costs.total > 0 ? 100.0 * cost / costs.total : 0.0; };
  for (const model::FunctionCost* c : rows) {
    auto f = by_name.find(c->name);
    std::string cycle = c->cycle >= 0 ? fmt::format(" <cycle {}>", c->cycle + 1) : "";
    w.row({fmt::format("{}", c->calls), fmt::format("{:.0f}", c->implicit_cost),
           fmt::format("{:.0f}{}", c->explicit_cost, c->uncounted ? "+" : ""),
           c->calls ? fmt::format("{:.1f}", c->implicit_cost / double(c->calls)) : "",
           FormatPercent(share(c->explicit_cost)),
           f != by_name.end() ? ModuleColumn(p, *f->second) : "",
           (options.full_names ? c->name : ShortName(c->name, false)) + cycle});
  }
  if (w.machine()) return;
  w.flush();
  w.title("bars", "Instructions per procedure (one # is 1%; ! is less than 1%)");
  for (const model::FunctionCost* c : rows) {
    if (c->explicit_cost <= 0) continue;
    size_t hashes = size_t(std::min(share(c->explicit_cost), 100.0));
    w.row({hashes ? std::string(hashes, '#') : "!",
           options.full_names ? c->name : ShortName(c->name, false)});
  }
  w.flush();
}

}  // namespace

void PrintProcedures(const model::Profile& p, const ReportOptions& options, std::string& out) {
  if (options.costs) return PrintProcedureCosts(p, options, out);
  // Timed tracing measures each call's elapsed time; the samples measure the profile's clock
  // (CPU time unless --clock wall). --sampled-times asks for the samples' times here too.
  bool timed = p.summary.trace_timed && !options.sampled_times;
  uint64_t whole = timed ? p.summary.traced_total_ns : p.summary.total_ns;
  std::vector<Row> rows;
  for (uint32_t i = 0; i < p.functions.size(); ++i) {
    const model::Function& f = p.functions[i];
    Row r{i, f.calls, f.inclusive_ns, f.self_ns, 0, f.timed, 0, 0, 0};
    if (f.timed && timed) {
      r.total = f.traced_inclusive_ns;
      r.self = f.traced_self_ns;
      r.min = f.traced_min_ns;
      r.max = f.traced_max_ns;
      r.average = f.calls ? f.traced_call_sum_ns / f.calls : 0;
    } else {
      r.average = f.calls ? r.total / f.calls : 0;
    }
    // Exact times and sampled ones do not mix: with timed tracing only traced functions show.
    if (timed && !f.timed) continue;
    r.timed = f.timed && timed;
    if (r.total == 0 && r.self == 0 && !f.calls_exact && f.calls == 0) continue;
    r.self_percent = whole ? 100.0 * double(r.self) / double(whole) : 0;
    if (!f.calls_exact && r.self_percent < options.otherCutoff()) continue;
    rows.push_back(r);
  }
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    if (a.self != b.self) return a.self > b.self;
    return p.functions[a.fn].name < p.functions[b.fn].name;
  });

  TableWriter w(p, options, out);
  w.title("procedures",
          timed ? "Procedures (elapsed time of every call, exact from --trace=timed; the other "
                  "tables and --sampled-times: " +
                      SampledClock(p) + ")"
          : p.summary.traced
              ? "Procedures (exact calls from tracing; times: " + SampledClock(p) + ")"
              : "Procedures (calls and times: " + SampledClock(p) + ")");
  w.header({"calls", "total", "self", "average", "min", "max", "self %", "module", "function"});
  for (const Row& r : rows) {
    const model::Function& f = p.functions[r.fn];
    std::string min = r.timed ? FormatTime(r.min, w.machine()) : (w.machine() ? "" : "-");
    std::string max = r.timed ? FormatTime(r.max, w.machine()) : (w.machine() ? "" : "-");
    w.row({FormatCount(r.calls, f.calls_exact, w.machine()), FormatTime(r.total, w.machine()),
           FormatTime(r.self, w.machine()), FormatAverage(r.average, f.calls_exact, w.machine()),
           min, max, FormatPercent(r.self_percent), ModuleColumn(p, f),
           FunctionLabel(p, model::FunctionId(r.fn), options)});
  }
  if (w.machine()) return;
  w.flush();

  w.title("bars", "Self time per procedure (one # is 1%; ! is less than 1%)");
  for (const Row& r : rows) {
    if (r.self == 0) continue;
    // At most 100: a percentage beyond (or NaN) would be a model bug, not a reason to die.
    size_t hashes = r.self_percent > 0 ? size_t(std::min(r.self_percent, 100.0)) : 0;
    std::string bar = hashes ? std::string(hashes, '#') : "!";
    w.row({bar, FunctionLabel(p, model::FunctionId(r.fn), options)});
  }
  w.flush();
  // Timed tracing knows the deepest traced stack; counts mode keeps no stack (0).
  bool traced_depth = p.summary.traced && p.summary.max_call_depth > 0;
  uint32_t depth = traced_depth ? p.summary.max_call_depth : p.summary.max_depth;
  out += fmt::format("\nmaximum call depth: {}{}\n", depth,
                     traced_depth ? " (traced)" : " (sampled stacks)");
}

}  // namespace hotline::report

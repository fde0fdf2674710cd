// -C: the flat table, functions by self time (texprofile's "commands").
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "report/report.h"
#include "report/text.h"

namespace hotline::report {

namespace {

// A TeX profile's -C: texprofile's command summary, TeX's command codes by time.
void PrintTexCommands(const model::Profile& p, const ReportOptions& options, std::string& out) {
  TableWriter w(p, options, out);
  w.title("flat", "TeX commands by time (" + SampledClock(p) + ")");
  // Several runs: each row's least and greatest run.
  bool runs = p.summary.runs > 1;
  std::vector<std::string> header = {"percent", "time", "slots", "time/slot", "code", "command"};
  if (runs) AddSpreadCells(header, {"spread"}, w.machine());
  w.header(Cells(header));
  for (const model::TexCommand& c : p.tex_commands) {
    if (p.percentOfTotal(c.ns) < options.otherCutoff()) continue;
    std::vector<std::string> row = {FormatPercent(p.percentOfTotal(c.ns)),
                                    FormatTime(c.ns, w.machine()),
                                    FormatCount(c.slots, true, w.machine()),
                                    FormatAverage(c.slots ? c.ns / c.slots : 0, true, w.machine()),
                                    std::to_string(c.code),
                                    c.name};
    if (runs) AddSpreadCells(row, {FormatSpread(c.spread, w.machine())}, w.machine());
    w.row(Cells(row));
  }
}

}  // namespace

void PrintFlat(const model::Profile& p, const ReportOptions& options, std::string& out) {
  if (!p.tex_commands.empty()) return PrintTexCommands(p, options, out);
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < p.functions.size(); ++i) {
    const model::Function& f = p.functions[i];
    if (f.inclusive_ns == 0 && f.self_ns == 0) continue;
    if (p.percentOfTotal(f.self_ns) < options.otherCutoff()) continue;
    order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const model::Function& fa = p.functions[a];
    const model::Function& fb = p.functions[b];
    if (fa.self_ns != fb.self_ns) return fa.self_ns > fb.self_ns;
    return fa.inclusive_ns > fb.inclusive_ns;
  });

  // The default report's short table: the rest counted in one line.
  size_t more = 0;
  uint64_t more_ns = 0;
  if (options.flat_limit && order.size() > options.flat_limit) {
    for (size_t k = options.flat_limit; k < order.size(); ++k)
      more_ns += p.functions[order[k]].self_ns;
    more = order.size() - options.flat_limit;
    order.resize(options.flat_limit);
  }

  TableWriter w(p, options, out);
  w.title("flat", "Functions by self time (" + SampledClock(p) + ")");
  w.header({"percent", "self", "inclusive", "calls", "self/call", "name"});
  for (uint32_t i : order) {
    const model::Function& f = p.functions[i];
    uint64_t per_call = f.calls ? f.self_ns / f.calls : 0;
    w.row({FormatPercent(p.percentOfTotal(f.self_ns)), FormatTime(f.self_ns, w.machine()),
           FormatTime(f.inclusive_ns, w.machine()),
           FormatCount(f.calls, f.calls_exact, w.machine()),
           FormatAverage(per_call, f.calls_exact, w.machine()),
           FunctionLabel(p, model::FunctionId(i), options)});
  }
  if (more)
    w.note(fmt::format("... and {} more function{} with {}% of the time: `hotline report -C` "
                       "lists them all",
                       more, more == 1 ? "" : "s", FormatPercent(p.percentOfTotal(more_ns))));
}

}  // namespace hotline::report

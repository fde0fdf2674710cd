#include "analysis/run_summary.h"

#include "model/merge.h"

namespace hotline::analysis {

RunSummary Summarize(const model::Profile& p) {
  RunSummary s;
  s.total_ns = p.summary.total_ns;
  s.samples = p.summary.samples;
  s.period_ns = p.summary.period_ns;
  s.clock = p.summary.clock;
  for (const model::Function& f : p.functions) {
    if (f.self_ns == 0 && f.inclusive_ns == 0) continue;
    FunctionCost c;
    c.name = f.name;
    c.file = f.file.valid() ? p.file(f.file).path : "";
    c.line = f.line;
    if (!f.file.valid() && f.module.valid()) c.module = p.module(f.module).name;
    c.self_ns = f.self_ns;
    c.inclusive_ns = f.inclusive_ns;
    c.calls = f.calls;
    c.samples = f.samples;
    s.functions.push_back(std::move(c));
  }
  for (const model::Line& l : p.lines) {
    if (l.time_ns == 0 && l.inclusive_ns == 0) continue;
    s.lines.push_back({p.file(l.file).path, l.line, l.time_ns, l.inclusive_ns, l.count, l.samples});
  }
  return s;
}

std::string FunctionKey(const FunctionCost& f) {
  return model::FunctionKey(f.name, f.file, f.line, f.module);
}

}  // namespace hotline::analysis

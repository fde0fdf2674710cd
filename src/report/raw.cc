// -R: the samples in file order (thread, time since the start, the time it stands for, stack
// depth, innermost function and its line); with -s, the stack changes that led to each sample
// before it. A measured profile's records (TeX's, Perl's) stand for the time their stack ran
// since the previous record of it, which the weight column shows.
#include <fmt/format.h>

#include "report/report.h"
#include "report/text.h"

namespace hotline::report {

void PrintRaw(const model::Profile& p, const ReportOptions& options, std::string& out) {
  TableWriter w(p, options, out);
  const bool m = w.machine();
  w.title("raw", options.stack_changes ? "Samples and stack changes" : "Samples");
  if (options.stack_changes)
    w.header({"kind", "thread", "time", "weight", "depth", "function", "where"});
  else
    w.header({"thread", "time", "weight", "depth", "function", "where"});
  // Times count from the process start, or from the first sample if that record was lost.
  uint64_t origin = p.summary.start_time ? p.summary.start_time : p.summary.first_time;
  for (const model::Sample& s : p.samples) {
    std::string tid = fmt::format("{}", s.tid);
    if (options.stack_changes) {
      if (s.popped) w.row({"pop", tid, "", "", "", fmt::format("{}", s.popped), ""});
      for (model::FunctionId fn : s.pushed)
        w.row({"push", tid, "", "", "", FunctionLabel(p, fn, options), ""});
    }
    const model::Line& line = p.line(s.line);
    std::string time = FormatTime(s.time >= origin ? s.time - origin : 0, m);
    std::string weight = FormatTime(s.ns, m);
    std::string depth = fmt::format("{}", s.depth);
    std::string leaf = FunctionLabel(p, s.leaf, options);
    // Code without lines has no file:line to show: its address says where it was instead.
    std::string where;
    const model::Function& leaf_fn = p.function(s.leaf);
    if (leaf_fn.pseudo == model::PseudoKind::kModule && s.module_address)
      where = fmt::format("{}+{:#x}", p.module(leaf_fn.module).name, *s.module_address);
    else if ((leaf_fn.pseudo == model::PseudoKind::kUnknown ||
              leaf_fn.pseudo == model::PseudoKind::kKernel) &&
             s.address)
      where = fmt::format("{:#x}", s.address);
    else
      where = fmt::format("{}:{}", p.file(line.file).path, line.line);
    if (options.stack_changes)
      w.row({"sample", tid, time, weight, depth, leaf, where});
    else
      w.row({tid, time, weight, depth, leaf, where});
  }
}

}  // namespace hotline::report

#include "model/invariants.h"

#include <cmath>
#include <string>

namespace hotline::model {

namespace {

std::string n(uint64_t v) { return std::to_string(v); }

double round2(double v) { return std::round(v * 100.0) / 100.0; }

// Printed percentages carry two decimals: each row is off by at most 0.005.
bool addsToHundred(double sum_of_rounded, size_t rows) {
  return std::fabs(sum_of_rounded - 100.0) <= 0.005 * static_cast<double>(rows) + 1e-9;
}

}  // namespace

Status CheckInvariants(const Profile& p) {
  const uint64_t total = p.summary.total_ns;
  uint64_t lines = 0, self = 0, files = 0, modules = 0, threads = 0;
  for (const Line& l : p.lines) lines += l.time_ns;
  for (const Function& f : p.functions) self += f.self_ns;
  for (const File& f : p.files) files += f.time_ns;
  for (const Module& m : p.modules) modules += m.self_ns;
  for (const Thread& t : p.threads) threads += t.time_ns;
  if (lines != total)
    return Status::Error("sum of line times " + n(lines) + " != total " + n(total));
  if (self != total)
    return Status::Error("sum of function self times " + n(self) + " != total " + n(total));
  if (files != total)
    return Status::Error("sum of file times " + n(files) + " != total " + n(total));
  if (modules != total)
    return Status::Error("sum of module times " + n(modules) + " != total " + n(total));
  if (threads != total)
    return Status::Error("sum of thread times " + n(threads) + " != total " + n(total));
  for (size_t i = 0; i < p.stack_frames.size(); ++i) {
    const StackFrame& f = p.stack_frames[i];
    uint32_t depth = f.caller.valid() ? p.stack_frames[f.caller.index()].depth + 1 : 1;
    if ((f.caller.valid() && f.caller.index() >= i) || f.depth != depth)
      return Status::Error("stack frame " + n(i) + " does not follow its caller in the trie");
  }
  for (const Stack& s : p.stacks)
    if (s.leaf.valid() && s.leaf.index() >= p.stack_frames.size())
      return Status::Error("a stack ends at a frame that does not exist");
  uint64_t stacks = 0;
  for (const StackTime& t : p.stack_times) stacks += t.ns;
  if (stacks != total)
    return Status::Error("sum of stack times " + n(stacks) + " != total " + n(total));
  uint64_t function_lines = 0;
  for (const FunctionLine& fl : p.function_lines) {
    function_lines += fl.self_ns;
    if (fl.inclusive_ns < fl.self_ns)
      return Status::Error("a function line's inclusive time < its self time");
  }
  if (!p.stack_times.empty() && function_lines != total)
    return Status::Error("sum of function-line self times " + n(function_lines) + " != total " +
                         n(total));
  for (const Line& l : p.lines)
    if (l.inclusive_ns < l.time_ns)
      return Status::Error("a line's inclusive time " + n(l.inclusive_ns) + " < its time " +
                           n(l.time_ns));
  if (p.callees.size() != p.functions.size())
    return Status::Error("call graph has " + n(p.callees.size()) + " sections for " +
                         n(p.functions.size()) + " functions");

  double self_percent = 0;
  size_t rows = 0;
  for (size_t i = 0; i < p.functions.size(); ++i) {
    const Function& f = p.functions[i];
    uint64_t sum = f.self_ns;
    for (const CallEdge& e : p.callees[i]) sum += e.time_ns;
    if (sum != f.inclusive_ns)
      return Status::Error("section " + f.name + ": self " + n(f.self_ns) + " + children " +
                           n(sum - f.self_ns) + " != inclusive " + n(f.inclusive_ns));
    if (f.inclusive_ns > total)
      return Status::Error("function " + f.name + ": inclusive " + n(f.inclusive_ns) + " > total " +
                           n(total));
    if (f.self_ns > 0) {
      self_percent += round2(p.percentOfTotal(f.self_ns));
      ++rows;
    }
    if (f.inclusive_ns > 0) {
      auto share = [&](uint64_t v) {
        return round2(100.0 * static_cast<double>(v) / static_cast<double>(f.inclusive_ns));
      };
      double section = share(f.self_ns);
      for (const CallEdge& e : p.callees[i]) section += share(e.time_ns);
      if (!addsToHundred(section, p.callees[i].size() + 1))
        return Status::Error("section " + f.name + ": percentages add to " +
                             std::to_string(section));
    }
  }
  if (total > 0 && !addsToHundred(self_percent, rows))
    return Status::Error("function self percentages add to " + std::to_string(self_percent));

  // Timed tracing keeps its own exact times beside the sampled ones; they obey the same sums.
  if (p.summary.trace_timed) {
    uint64_t traced_self = 0;
    for (const Function& f : p.functions) {
      if (!f.timed) continue;
      traced_self += f.traced_self_ns;
      if (f.traced_self_ns > f.traced_inclusive_ns)
        return Status::Error("function " + f.name + ": traced self " + n(f.traced_self_ns) +
                             " > traced inclusive " + n(f.traced_inclusive_ns));
      if (f.traced_inclusive_ns > p.summary.traced_total_ns)
        return Status::Error("function " + f.name + ": traced inclusive " +
                             n(f.traced_inclusive_ns) + " > traced total " +
                             n(p.summary.traced_total_ns));
      if (f.traced_min_ns > f.traced_max_ns)
        return Status::Error("function " + f.name + ": shortest call " + n(f.traced_min_ns) +
                             " > longest " + n(f.traced_max_ns));
    }
    if (traced_self != p.summary.traced_total_ns)
      return Status::Error("sum of traced self times " + n(traced_self) + " != traced total " +
                           n(p.summary.traced_total_ns));
  }
  return Status();
}

}  // namespace hotline::model

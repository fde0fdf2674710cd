// Folded stacks (Brendan Gregg's stackcollapse output, read by flamegraph.pl, speedscope,
// inferno): one line per distinct stack, outermost frame first, its samples (FlameGraph's
// convention) or its time in nanoseconds.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "base/caret_notation.h"
#include "export/export.h"

namespace hotline::exporter {
namespace {

// `;` separates frames and the last space starts the number: neither may appear in a frame, nor
// may a line break.
std::string FrameText(std::string text) {
  std::replace(text.begin(), text.end(), ';', ',');
  return base::CaretNotation(std::move(text));
}

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string FoldedStack(const model::Profile& p, const model::StackTime& st,
                        const ExportOptions& options) {
  std::string text;
  if (options.per_thread) {
    const model::Thread& t = p.threads[st.thread];
    text = t.name.empty() ? fmt::format("thread {}", t.tid)
                          : FrameText(fmt::format("thread {} {}", t.tid, t.name));
  }
  std::vector<model::StackFrame> frames;
  p.framesOf(st.stack, frames);
  for (size_t i = 0; i < frames.size(); ++i) {
    if (!text.empty()) text += ';';
    const model::Function& f = p.function(frames[i].function);
    text += FrameText(f.name);
    bool leaf = i + 1 == frames.size();
    if (leaf && options.lines && frames[i].line.valid() && f.pseudo == model::PseudoKind::kNone) {
      const model::Line& line = p.line(frames[i].line);
      text += FrameText(fmt::format(" ({}:{})", BaseName(p.file(line.file).path), line.line));
    }
  }
  return text;
}

}  // namespace

Expected<std::string> ExportFolded(const model::Profile& profile, const ExportOptions& options) {
  // A front-end that measured every statement or command slot took no samples: its records are
  // batches of them, and only their time means anything.
  bool measured = profile.summary.interpreted && profile.summary.sampler == format::Sampler::kNone;
  bool samples =
      options.unit == FoldedUnit::kSamples || (options.unit == FoldedUnit::kDefault && !measured);
  // Stacks that differ only in addresses, or in lines when lines are not shown, fold together.
  // Time no sample stands for ([unsampled]) has no samples.
  std::map<std::string, uint64_t> weight_by_stack;
  for (const model::StackTime& st : profile.stack_times)
    if (uint64_t weight = samples ? st.samples : st.ns; weight > 0)
      weight_by_stack[FoldedStack(profile, st, options)] += weight;
  std::vector<std::pair<std::string, uint64_t>> rows(weight_by_stack.begin(),
                                                     weight_by_stack.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [stack, weight] : rows)
    out += fmt::format("{} {}\n", stack.empty() ? "[empty]" : stack, weight);
  return out;
}

}  // namespace hotline::exporter

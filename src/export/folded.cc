// Folded stacks (Brendan Gregg's stackcollapse output, read by flamegraph.pl, speedscope,
// inferno): one line per distinct stack, outermost frame first, its time in nanoseconds.
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
  // Stacks that differ only in addresses, or in lines when lines are not shown, fold together.
  std::map<std::string, uint64_t> ns_by_stack;
  for (const model::StackTime& st : profile.stack_times)
    if (st.ns > 0) ns_by_stack[FoldedStack(profile, st, options)] += st.ns;
  std::vector<std::pair<std::string, uint64_t>> rows(ns_by_stack.begin(), ns_by_stack.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [stack, ns] : rows)
    out += fmt::format("{} {}\n", stack.empty() ? "[empty]" : stack, ns);
  return out;
}

}  // namespace hotline::exporter

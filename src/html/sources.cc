// The annotated sources' data: for every file with data whose source is on disk, one file with
// its text, its lines' numbers (as `hotline annotate` shows them) and the time each calling
// line gave each callee, loaded when the page shows it. Files whose source cannot be found are
// listed as missing.
#include "report/sources.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "html/parts.h"

namespace hotline::html {
namespace {

// Per calling line, the time that went to each function it called (NYTProf's calls on a line):
// the time of the stacks through each frame goes to its caller frame's line and its function,
// once per stack (a recursion back through the same line and callee counts its outer call).
// One walk of the frame trie, depth first, with the (line, callee) pairs open on the path.
std::map<uint32_t, std::vector<std::tuple<uint32_t, uint32_t, uint64_t>>> CallsPerLine(
    const model::Profile& p) {
  const std::vector<model::StackFrame>& frames = p.stack_frames;
  size_t n = frames.size();
  std::vector<uint64_t> through(n, 0);
  for (const model::StackTime& t : p.stack_times)
    if (model::FrameId leaf = p.stacks[t.stack.index()].leaf; leaf.valid())
      through[leaf.index()] += t.ns;
  // A frame's caller comes before it: summing from the end adds each subtree once.
  std::vector<std::vector<uint32_t>> children(n);
  std::vector<uint32_t> roots;
  for (size_t i = n; i-- > 0;) {
    if (model::FrameId caller = frames[i].caller; caller.valid()) {
      through[caller.index()] += through[i];
      children[caller.index()].push_back(uint32_t(i));
    } else {
      roots.push_back(uint32_t(i));
    }
  }
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> per_pair;  // (line id, callee) → ns
  std::unordered_map<uint64_t, uint32_t> open;                 // pairs on the path
  std::vector<std::pair<uint32_t, bool>> todo;                 // (frame, leaving)
  for (uint32_t r : roots) todo.push_back({r, false});
  while (!todo.empty()) {
    auto [i, leaving] = todo.back();
    todo.pop_back();
    const model::StackFrame& f = frames[i];
    model::FrameId caller = f.caller;
    bool edge = caller.valid() && frames[caller.index()].line.valid() && through[i] > 0;
    uint64_t key =
        edge ? (uint64_t(frames[caller.index()].line.index()) << 32) | f.function.index() : 0;
    if (leaving) {
      if (edge && --open[key] == 0) open.erase(key);
      continue;
    }
    if (through[i] == 0) continue;
    if (edge && open[key]++ == 0)
      per_pair[{frames[caller.index()].line.index(), f.function.index()}] += through[i];
    todo.push_back({i, true});
    for (uint32_t c : children[i]) todo.push_back({c, false});
  }
  std::map<uint32_t, std::vector<std::tuple<uint32_t, uint32_t, uint64_t>>> by_file;
  for (const auto& [pair, ns] : per_pair) {
    const model::Line& line = p.lines[pair.first];
    if (line.line == 0 || p.percentOfTotal(ns) < 0.01) continue;
    by_file[line.file.index()].push_back({line.line, pair.second, ns});
  }
  return by_file;
}

}  // namespace

void AddSources(const HtmlInput& input, nlohmann::json& data, ReportFiles& files) {
  const model::Profile& p = *input.profile;
  // Each real file's lines, as [line, count, count exact, time, inclusive time].
  std::map<uint32_t, nlohmann::json> lines_of;
  for (const model::Line& l : p.lines)
    if (l.line > 0 && p.file(l.file).pseudo == model::PseudoKind::kNone)
      lines_of[l.file.index()].push_back(
          {l.line, l.count, l.count_exact ? 1 : 0, l.time_ns, l.inclusive_ns});
  auto calls_of = CallsPerLine(p);
  nlohmann::json list = nlohmann::json::array();
  for (uint32_t i = 0; i < p.files.size(); ++i) {
    const model::File& f = p.files[i];
    auto lines = lines_of.find(i);
    bool with_data = lines != lines_of.end();
    std::string found = with_data ? report::FindSource(p, f.path, input.source_dirs) : "";
    list.push_back({{"path", f.path},
                    {"time_ns", f.time_ns},
                    {"count", f.count},
                    {"lines_hit", f.lines_hit},
                    {"pseudo", f.pseudo != model::PseudoKind::kNone},
                    {"data", with_data},
                    {"source", !found.empty()}});
    if (found.empty()) continue;
    // The calls of each line, as [line, callee, time], the most time first.
    nlohmann::json calls = nlohmann::json::array();
    if (auto it = calls_of.find(i); it != calls_of.end()) {
      std::stable_sort(it->second.begin(), it->second.end(), [](const auto& a, const auto& b) {
        return std::get<0>(a) != std::get<0>(b) ? std::get<0>(a) < std::get<0>(b)
                                                : std::get<2>(a) > std::get<2>(b);
      });
      for (const auto& [line, callee, ns] : it->second) calls.push_back({line, callee, ns});
    }
    std::string key = fmt::format("source-{}", i);
    files["data/" + key + ".js"] = DataScript(key, {{"path", f.path},
                                                    {"found", found},
                                                    {"text", report::ReadSourceLines(p, found)},
                                                    {"lines", std::move(lines->second)},
                                                    {"calls", std::move(calls)}});
  }
  data["files"] = std::move(list);
}

}  // namespace hotline::html

// The callgrind format, version 1 (valgrind.org/docs/manual/cl-format.html), read by
// callgrind_annotate, KCachegrind and QCachegrind. Costs are nanoseconds; a function's self time
// is given per source line (the lines its samples' innermost frames were at), its calls as
// `calls=` with their inclusive time at the function's definition line (the model keeps call
// edges per function, not per call site). Names are compressed: `fn=(3) name` once, `fn=(3)`
// after.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include "base/caret_notation.h"
#include "export/export.h"

namespace hotline::exporter {
namespace {

// One kind of compressed name (files, functions, objects): an id per distinct string.
class NameTable {
 public:
  std::string operator()(const std::string& name) {
    auto [it, fresh] = ids_.try_emplace(name, ids_.size() + 1);
    return fresh ? fmt::format("({}) {}", it->second, base::CaretNotation(name))
                 : fmt::format("({})", it->second);
  }

 private:
  std::unordered_map<std::string, size_t> ids_;
};

struct LineCost {
  uint64_t ns = 0, count = 0;
};

// Per function, the cost of each of its lines, keyed by LineId index (file, line order).
using LineCosts = std::vector<std::map<uint32_t, LineCost>>;

// The self time of every (function, line), as the model holds it.
LineCosts SelfTimeByLine(const model::Profile& p) {
  LineCosts costs(p.functions.size());
  for (const model::FunctionLine& fl : p.function_lines)
    if (fl.self_ns > 0) costs[fl.function.index()][fl.line.index()].ns = fl.self_ns;
  return costs;
}

// Per file, its functions by definition line: where a line without samples belongs.
class FunctionsByStart {
 public:
  explicit FunctionsByStart(const model::Profile& p) : starts_(p.files.size()) {
    for (uint32_t i = 0; i < p.functions.size(); ++i) {
      const model::Function& f = p.functions[i];
      if (f.file.valid() && f.line > 0) starts_[f.file.index()].emplace_back(f.line, i);
    }
    for (auto& file : starts_) std::sort(file.begin(), file.end());
  }
  // The function defined last at or before `line` in its file.
  std::optional<uint32_t> enclosing(const model::Line& line) const {
    const auto& file = starts_[line.file.index()];
    auto after = std::upper_bound(file.begin(), file.end(), std::make_pair(line.line, UINT32_MAX));
    if (after == file.begin()) return std::nullopt;
    return std::prev(after)->second;
  }

 private:
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> starts_;  // (line, function)
};

// Exact counts go to the first function with samples at the line, else to the function the
// line lies in: once each, so callgrind's per-line totals are the counts.
void AddExactCounts(const model::Profile& p, LineCosts& costs) {
  std::vector<std::optional<uint32_t>> sampled_in(p.lines.size());
  for (uint32_t f = 0; f < costs.size(); ++f)
    for (const auto& [line, cost] : costs[f])
      if (!sampled_in[line]) sampled_in[line] = f;
  FunctionsByStart functions(p);
  for (uint32_t l = 0; l < p.lines.size(); ++l) {
    const model::Line& line = p.lines[l];
    if (!line.count_exact || line.count == 0) continue;
    std::optional<uint32_t> f = sampled_in[l] ? sampled_in[l] : functions.enclosing(line);
    if (f) costs[*f][l].count = line.count;
  }
}

std::string CallgrindFileName(const model::Profile& p, model::FileId id) {
  return id.valid() ? p.file(id).path : "???";
}

class CallgrindWriter {
 public:
  CallgrindWriter(const model::Profile& p, bool counts) : p_(p), counts_(counts) {}

  void header(std::string& out) {
    out += "# callgrind format\nversion: 1\ncreator: hotline\n";
    std::string cmd = p_.summary.exe;
    for (size_t i = 1; i < p_.summary.argv.size(); ++i) cmd += " " + p_.summary.argv[i];
    if (!cmd.empty()) out += fmt::format("cmd: {}\n", cmd);
    out += "positions: line\n";
    out += counts_ ? "events: ns count\n" : "events: ns\n";
  }

  void function(uint32_t index, const std::map<uint32_t, LineCost>& lines, std::string& out) {
    const model::Function& f = p_.functions[index];
    std::string file = CallgrindFileName(p_, f.file);
    out += fmt::format("\nob={}\nfl={}\nfn={}\n", objects_(ObjectPath(f)), files_(file),
                       functions_(f.name));
    std::string current = file;
    for (const auto& [line_index, cost] : lines) {
      const model::Line& line = p_.lines[line_index];
      std::string path = CallgrindFileName(p_, line.file);
      if (path != current) {
        // fi= switches the file of the following lines inside the same function.
        out += fmt::format("fi={}\n", files_(path));
        current = path;
      }
      out += costLine(line.line, cost);
    }
    if (current != file) out += fmt::format("fe={}\n", files_(file));
    for (const model::CallEdge& edge : p_.calleesOf(model::FunctionId(index))) {
      const model::Function& child = p_.function(edge.child);
      out += fmt::format("cob={}\ncfi={}\ncfn={}\n", objects_(ObjectPath(child)),
                         files_(CallgrindFileName(p_, child.file)), functions_(child.name));
      out += fmt::format("calls={} {}\n", edge.calls, child.line);
      out += costLine(f.line, {edge.time_ns, 0});
    }
  }

  void summary(std::string& out) {
    uint64_t count = 0;
    for (const model::Line& l : p_.lines)
      if (l.count_exact) count += l.count;
    out += counts_ ? fmt::format("\nsummary: {} {}\n", p_.summary.total_ns, count)
                   : fmt::format("\nsummary: {}\n", p_.summary.total_ns);
  }

 private:
  std::string ObjectPath(const model::Function& f) {
    return f.module.valid() ? p_.module(f.module).path : "???";
  }
  std::string costLine(uint32_t line, LineCost cost) const {
    return counts_ ? fmt::format("{} {} {}\n", line, cost.ns, cost.count)
                   : fmt::format("{} {}\n", line, cost.ns);
  }

  const model::Profile& p_;
  bool counts_;
  NameTable objects_, files_, functions_;
};

}  // namespace

Expected<std::string> ExportCallgrindInstructions(const model::Profile& profile,
                                                  const format::RawProfile& raw) {
  if (raw.line_instructions.empty())
    return Status::Error(
        "the profile has no instruction counts (a --counts-only run of a "
        "--coverage build has them)");
  std::map<std::string, const format::RawFunctionInstructions*> functions;
  for (const format::RawFunctionInstructions& f : raw.function_instructions) functions[f.name] = &f;
  NameTable objects, files, names;
  std::string out = "# callgrind format\nversion: 1\ncreator: hotline\n";
  std::string cmd = profile.summary.exe;
  for (size_t i = 1; i < profile.summary.argv.size(); ++i) cmd += " " + profile.summary.argv[i];
  if (!cmd.empty()) out += fmt::format("cmd: {}\n", cmd);
  out += "positions: line\nevents: Ir\n";
  uint64_t total = 0;
  // A record per (function, file): the function's own file first, fi= for the others.
  std::string function;
  std::string home, current;
  for (const format::RawLineInstructions& r : raw.line_instructions) {
    if (r.function != function) {
      if (!function.empty() && current != home) out += fmt::format("fe={}\n", files(home));
      function = r.function;
      auto f = functions.find(function);
      home = f != functions.end() && !f->second->file.empty() ? f->second->file : r.file;
      current = home;
      out +=
          fmt::format("\nob={}\nfl={}\nfn={}\n", objects(r.module), files(home), names(function));
    }
    if (r.file != current) {
      out += fmt::format("fi={}\n", files(r.file));
      current = r.file;
    }
    for (const format::RawLineInstructions::Row& row : r.lines) {
      if (row.executed == 0) continue;
      out += fmt::format("{} {}\n", row.line, row.executed);
      total += row.executed;
    }
  }
  if (!function.empty() && current != home) out += fmt::format("fe={}\n", files(home));
  out += fmt::format("\nsummary: {}\n", total);
  return out;
}

Expected<std::string> ExportCallgrind(const model::Profile& profile) {
  bool counts = profile.summary.exact_line_counts;
  LineCosts costs = SelfTimeByLine(profile);
  if (counts) AddExactCounts(profile, costs);
  CallgrindWriter writer(profile, counts);
  std::string out;
  writer.header(out);
  for (uint32_t i = 0; i < profile.functions.size(); ++i) {
    if (costs[i].empty() && profile.callees[i].empty()) continue;
    writer.function(i, costs[i], out);
  }
  writer.summary(out);
  return out;
}

}  // namespace hotline::exporter

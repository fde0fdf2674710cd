// The differential flame graph's data. Both profiles' stacks go into one tree of paths, keyed by
// function identity (model::FunctionKey), each node holding both sides' time and samples; each
// graph file is that tree in one side's shape (NEW's or BASE's) and one order (callers or callees
// first), every frame with its base and new time, its change, and whether the change is beyond
// the sampling noise: analysis::PoissonRatio's interval at the frame's sample counts, at the
// table's confidence spread over the graph's frames (Bonferroni, as analysis::Compare does over
// a table's rows), lies wholly above or below no change.
#include "html/diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <span>
#include <unordered_map>

#include "analysis/statistics.h"
#include "html/parts.h"
#include "model/merge.h"
#include "model/stack_tree.h"
#include "report/names.h"

namespace hotline::html {
namespace {

enum Side { kBase = 0, kNew = 1 };

// What a frame's colour stands for (the page's `q`).
enum FrameState {
  kWithinNoise = 0,
  kBeyondNoise = 1,
  kOnlyInNew = 2,   // a path BASE does not have: new work
  kOnlyInBase = 3,  // in BASE's shape, a path NEW no longer has
};

// The functions of both profiles, one entry per FunctionKey.
struct FunctionTable {
  std::map<std::string, uint32_t> index;
  nlohmann::json name = nlohmann::json::array(), short_name = nlohmann::json::array(),
                 pseudo = nlohmann::json::array();

  // Each of `p`'s functions' entry, by FunctionId index.
  std::vector<uint32_t> Intern(const model::Profile& p) {
    std::vector<std::string> shorts = report::ShortNames(p);
    std::vector<uint32_t> ids(p.functions.size());
    for (uint32_t i = 0; i < p.functions.size(); ++i) {
      const model::Function& f = p.functions[i];
      auto [it, added] = index.try_emplace(model::FunctionKey(p, f), uint32_t(name.size()));
      if (added) {
        name.push_back(f.name);
        short_name.push_back(shorts[i]);
        pseudo.push_back(f.pseudo != model::PseudoKind::kNone ? 1 : 0);
      }
      ids[i] = it->second;
    }
    return ids;
  }
};

struct SideTime {
  uint64_t ns = 0, self_ns = 0, samples = 0;
};

struct PathNode {
  uint32_t function = 0;  // into FunctionTable; the root has none
  uint32_t parent = 0;    // parents come before their children
  SideTime side[2];
};

// Both profiles' stacks merged by path of functions, from the outermost frame in or from the
// innermost frame out.
class PathTree {
 public:
  explicit PathTree(model::StackOrder order) : order_(order) { nodes_.push_back({}); }

  void Add(const model::Profile& p, Side side, const std::vector<uint32_t>& function_ids) {
    std::vector<uint64_t> ns(p.stacks.size(), 0), samples(p.stacks.size(), 0);
    for (const model::StackTime& t : p.stack_times) {
      ns[t.stack.index()] += t.ns;
      samples[t.stack.index()] += t.samples;
    }
    // Stack by stack: time in the stacks' depths added up, memory in the tree and one stack.
    std::vector<model::StackFrame> frames;
    for (uint32_t s = 0; s < p.stacks.size(); ++s) {
      if (ns[s] == 0) continue;
      p.framesOf(model::StackId(s), frames);
      uint32_t node = 0;
      Count(node, side, ns[s], samples[s]);
      for (size_t i = 0; i < frames.size(); ++i) {
        const model::StackFrame& f =
            order_ == model::StackOrder::kCallersFirst ? frames[i] : frames[frames.size() - 1 - i];
        node = Child(node, function_ids[f.function.index()]);
        Count(node, side, ns[s], samples[s]);
      }
      nodes_[node].side[side].self_ns += ns[s];
    }
  }

  const std::vector<PathNode>& nodes() const { return nodes_; }

 private:
  uint32_t Child(uint32_t parent, uint32_t function) {
    uint64_t key = (uint64_t{parent} << 32) | function;
    auto [it, added] = children_.try_emplace(key, uint32_t(nodes_.size()));
    if (added) nodes_.push_back({function, parent, {}});
    return it->second;
  }
  void Count(uint32_t node, Side side, uint64_t ns, uint64_t samples) {
    nodes_[node].side[side].ns += ns;
    nodes_[node].side[side].samples += samples;
  }

  model::StackOrder order_;
  std::vector<PathNode> nodes_;
  std::unordered_map<uint64_t, uint32_t> children_;
};

// The samples behind `t`: its own count, or for time no sample stands for ([unsampled]) its time
// in periods, as analysis::Compare counts.
uint64_t SampleCount(const SideTime& t, uint64_t period_ns) {
  if (t.samples > 0) return t.samples;
  const uint64_t period = std::max<uint64_t>(period_ns, 1);
  return std::max<uint64_t>(1, uint64_t(std::llround(double(t.ns) / double(period))));
}

double Rounded(double x) { return std::round(x * 1e4) / 1e4; }

// The tree in `side`'s shape: frames as wide as that side's time.
nlohmann::json ShapeOf(const PathTree& tree, Side side, const DiffInput& input) {
  const std::vector<PathNode>& nodes = tree.nodes();
  const Side other = side == kBase ? kNew : kBase;
  const uint64_t total = nodes[0].side[side].ns;
  const uint64_t min_ns = static_cast<uint64_t>(static_cast<double>(total) * kFlameMinShare);
  uint64_t missing_ns = 0;  // the other side's time in paths this side does not have
  std::vector<int64_t> kept(nodes.size(), -1);
  std::vector<uint32_t> shown;
  uint32_t compared = 0;
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    const PathNode& n = nodes[i];
    bool root = i == 0;
    if (!root && n.side[side].ns == 0) {
      // The topmost node of a path this side lacks holds the other side's time there.
      if (nodes[n.parent].side[side].ns > 0) missing_ns += n.side[other].ns;
      continue;
    }
    if (!root && (n.side[side].ns < min_ns || kept[n.parent] < 0)) continue;
    kept[i] = static_cast<int64_t>(shown.size());
    shown.push_back(i);
    if (n.side[kBase].ns > 0 && n.side[kNew].ns > 0) ++compared;
  }
  const double level = 1 - (1 - input.options.confidence) / std::max<uint32_t>(compared, 1);
  const uint64_t base_period = input.base->summary.period_ns,
                 new_period = input.next->summary.period_ns;
  nlohmann::json f = nlohmann::json::array(), parent = nlohmann::json::array(),
                 value = nlohmann::json::array(), self = nlohmann::json::array(),
                 base_ns = nlohmann::json::array(), new_ns = nlohmann::json::array(),
                 state = nlohmann::json::array(), change = nlohmann::json::array();
  for (uint32_t i : shown) {
    const PathNode& n = nodes[i];
    const SideTime &b = n.side[kBase], &x = n.side[kNew];
    f.push_back(i == 0 ? -1 : int64_t(n.function));
    parent.push_back(i == 0 ? 0 : kept[n.parent]);
    value.push_back(n.side[side].ns);
    self.push_back(n.side[side].self_ns);
    base_ns.push_back(b.ns);
    new_ns.push_back(x.ns);
    if (b.ns == 0 || x.ns == 0) {
      state.push_back(b.ns == 0 ? kOnlyInNew : kOnlyInBase);
      change.push_back(b.ns == 0 ? 0.0 : -1.0);
      continue;
    }
    const double ratio = double(x.ns) / double(b.ns);
    const uint64_t base_count = SampleCount(b, base_period), new_count = SampleCount(x, new_period);
    // The counts' noise around the times' own ratio: (new_count / scale) / base_count = ratio.
    const double scale = double(new_count) / (ratio * double(base_count));
    analysis::Interval interval = analysis::PoissonRatio(base_count, 1.0, new_count, scale, level);
    state.push_back(interval.low > 0 || interval.high < 0 ? kBeyondNoise : kWithinNoise);
    change.push_back(Rounded(ratio - 1));
  }
  return {{"total", total},           {"other_total", nodes[0].side[other].ns},
          {"missing_ns", missing_ns}, {"compared", compared},
          {"level", level},           {"f", std::move(f)},
          {"p", std::move(parent)},   {"v", std::move(value)},
          {"s", std::move(self)},     {"b", std::move(base_ns)},
          {"n", std::move(new_ns)},   {"q", std::move(state)},
          {"c", std::move(change)}};
}

// A table of analysis::Compare's: rows of [name, file, line, base, new, base %, new %, interval
// low, interval high, verdict, short name].
nlohmann::json ChangeTable(const analysis::DiffTable& table) {
  nlohmann::json rows = nlohmann::json::array();
  for (const analysis::DiffRow& r : table.rows)
    rows.push_back({r.name, r.file, r.line, std::llround(r.base_ns), std::llround(r.new_ns),
                    Rounded(r.base_share), Rounded(r.new_share), Rounded(r.low), Rounded(r.high),
                    analysis::VerdictName(r.verdict), report::ShortName(r.name, false)});
  return {{"compared", table.compared}, {"rows", std::move(rows)}};
}

nlohmann::json SideFacts(const model::Profile& p, const std::string& path) {
  return {{"path", path},
          {"program", p.summary.exe},
          {"argv", p.summary.argv},
          {"total_ns", p.summary.total_ns},
          {"samples", p.summary.samples},
          {"period_ns", p.summary.period_ns}};
}

}  // namespace

Status WriteDiffReport(const DiffInput& input, const std::string& dir) {
  const model::Profile &base = *input.base, &next = *input.next;
  if (base.summary.clock != next.summary.clock)
    return Status::Error("CPU time and elapsed time (--clock wall) do not compare");
  ReportFiles files;
  FunctionTable functions;
  const std::vector<uint32_t> base_ids = functions.Intern(base), new_ids = functions.Intern(next);
  nlohmann::json graphs;
  for (model::StackOrder order :
       {model::StackOrder::kCallersFirst, model::StackOrder::kCalleesFirst}) {
    PathTree tree(order);
    tree.Add(base, kBase, base_ids);
    tree.Add(next, kNew, new_ids);
    const char* order_name = order == model::StackOrder::kCallersFirst ? "callers" : "callees";
    for (Side side : {kNew, kBase}) {
      const char* side_name = side == kNew ? "new" : "base";
      nlohmann::json graph = ShapeOf(tree, side, input);
      std::string key = fmt::format("diff-{}-{}", side_name, order_name);
      graphs[side_name][order_name] = {{"key", key}, {"missing_ns", graph["missing_ns"]}};
      files["data/" + key + ".js"] = DataScript(key, graph);
    }
  }
  analysis::RunSummary base_summary = analysis::Summarize(base),
                       new_summary = analysis::Summarize(next);
  analysis::Diff compared = analysis::Compare({&base_summary}, {&new_summary}, input.options);
  files["data/changes.js"] = DataScript("changes", {{"self", ChangeTable(compared.self)},
                                                    {"inclusive", ChangeTable(compared.inclusive)},
                                                    {"lines", ChangeTable(compared.lines)}});
  const double base_total = double(base.summary.total_ns),
               new_total = double(next.summary.total_ns);
  nlohmann::json data;
  data["diff"] = {
      {"base", SideFacts(base, input.base_path)},
      {"new", SideFacts(next, input.new_path)},
      {"change", base_total > 0 ? Rounded(new_total / base_total - 1) : 0.0},
      {"clock", base.summary.clock == format::ClockMode::kWall ? "elapsed" : "CPU"},
      {"confidence", input.options.confidence},
      {"threshold", input.options.threshold},
      {"graphs", std::move(graphs)},
  };
  nlohmann::json warnings = input.warnings;
  // Both runs of one program often say the same (a library without debug info): once is enough.
  for (const model::Profile* p : {&base, &next})
    for (const std::string& w : p->warnings)
      if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
  data["warnings"] = std::move(warnings);
  data["functions"] = {{"name", std::move(functions.name)},
                       {"short", std::move(functions.short_name)},
                       {"pseudo", std::move(functions.pseudo)}};
  data["total_ns"] = next.summary.total_ns;
  files["data/data.js"] = DataScript("data", data);
  return WriteReport(std::move(files), dir);
}

}  // namespace hotline::html

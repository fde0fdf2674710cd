// The flame graphs' data: the model's stack trees, one file per (all threads or one thread) ×
// (callers first or callees first), loaded when the page shows that graph. Nodes narrower than
// kFlameMinShare of the tree's time are left out with their subtrees: on any screen they would be
// under a pixel wide, and their time still shows in their parents'.
#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "html/parts.h"
#include "model/stack_tree.h"

namespace hotline::html {
namespace {

// The tree as columns: function (-1 for the root), parent, total, self; node 0 is the root.
nlohmann::json TreeColumns(const model::StackTree& tree) {
  const uint64_t total = tree.nodes.empty() ? 0 : tree.nodes[0].total_ns;
  const uint64_t min_ns = static_cast<uint64_t>(static_cast<double>(total) * kFlameMinShare);
  std::vector<int64_t> kept(tree.nodes.size(), -1);
  nlohmann::json f = nlohmann::json::array(), parent = nlohmann::json::array(),
                 value = nlohmann::json::array(), self = nlohmann::json::array();
  for (size_t i = 0; i < tree.nodes.size(); ++i) {
    const model::StackTreeNode& n = tree.nodes[i];
    bool root = i == 0;
    // Parents come first, so a dropped parent is known before its children.
    if (!root && (n.total_ns < min_ns || n.total_ns == 0 || kept[n.parent] < 0)) continue;
    kept[i] = static_cast<int64_t>(f.size());
    f.push_back(root ? -1 : static_cast<int64_t>(n.function.index()));
    parent.push_back(root ? 0 : kept[n.parent]);
    value.push_back(n.total_ns);
    self.push_back(n.self_ns);
  }
  return {{"total", total},
          {"f", std::move(f)},
          {"p", std::move(parent)},
          {"v", std::move(value)},
          {"s", std::move(self)}};
}

void AddFlame(const model::Profile& p, std::optional<uint32_t> thread, nlohmann::json& names,
              ReportFiles& files) {
  std::string which = thread ? fmt::format("t{}", *thread) : "all";
  for (model::StackOrder order :
       {model::StackOrder::kCallersFirst, model::StackOrder::kCalleesFirst}) {
    std::string key = fmt::format(
        "flame-{}-{}", which, order == model::StackOrder::kCallersFirst ? "callers" : "callees");
    files["data/" + key + ".js"] =
        DataScript(key, TreeColumns(model::BuildStackTree(p, order, thread)));
  }
  names.push_back(which);
}

}  // namespace

void AddFlameGraphs(const model::Profile& p, nlohmann::json& data, ReportFiles& files) {
  nlohmann::json names = nlohmann::json::array();
  AddFlame(p, std::nullopt, names, files);
  if (p.threads.size() > 1)
    for (uint32_t t = 0; t < p.threads.size(); ++t)
      if (p.threads[t].time_ns > 0) AddFlame(p, t, names, files);
  data["flames"] = std::move(names);
}

}  // namespace hotline::html

// The functions table's data, in columns (one array per field, indexed by FunctionId: compact
// for profiles of many functions) with each function's hottest line; and in a file of their own,
// each function's callees as the call graph holds them (the page inverts them for the callers,
// as -G does).
#include <string>
#include <vector>

#include "html/parts.h"
#include "model/stack_tree.h"
#include "report/names.h"

namespace hotline::html {

void AddFunctions(const model::Profile& p, nlohmann::json& data, ReportFiles& files) {
  std::vector<std::string> short_names = report::ShortNames(p);
  std::vector<model::LineId> hottest = model::HottestLines(p);
  nlohmann::json name = nlohmann::json::array(), short_name = nlohmann::json::array(),
                 file = nlohmann::json::array(), line = nlohmann::json::array(),
                 self = nlohmann::json::array(), inclusive = nlohmann::json::array(),
                 calls = nlohmann::json::array(), exact = nlohmann::json::array(),
                 pseudo = nlohmann::json::array(), hot_file = nlohmann::json::array(),
                 hot_line = nlohmann::json::array(), callees = nlohmann::json::array();
  for (uint32_t i = 0; i < p.functions.size(); ++i) {
    const model::Function& f = p.functions[i];
    name.push_back(f.name);
    short_name.push_back(short_names[i]);
    file.push_back(f.file.valid() ? static_cast<int64_t>(f.file.index()) : -1);
    line.push_back(f.line);
    self.push_back(f.self_ns);
    inclusive.push_back(f.inclusive_ns);
    calls.push_back(f.calls);
    exact.push_back(f.calls_exact ? 1 : 0);
    pseudo.push_back(f.pseudo != model::PseudoKind::kNone ? 1 : 0);
    if (hottest[i].valid()) {
      const model::Line& l = p.line(hottest[i]);
      hot_file.push_back(l.file.index());
      hot_line.push_back(l.line);
    } else {
      hot_file.push_back(-1);
      hot_line.push_back(0);
    }
    nlohmann::json edges = nlohmann::json::array();
    for (const model::CallEdge& e : p.calleesOf(model::FunctionId(i)))
      edges.push_back({e.child.index(), e.time_ns, e.loop_ns, e.calls});
    callees.push_back(std::move(edges));
  }
  data["functions"] = {{"name", std::move(name)},        {"short", std::move(short_name)},
                       {"file", std::move(file)},        {"line", std::move(line)},
                       {"self", std::move(self)},        {"inclusive", std::move(inclusive)},
                       {"calls", std::move(calls)},      {"exact", std::move(exact)},
                       {"pseudo", std::move(pseudo)},    {"hot_file", std::move(hot_file)},
                       {"hot_line", std::move(hot_line)}};
  // The edges can outnumber the functions many times: loaded when a function is first shown.
  files["data/callees.js"] = DataScript("callees", callees);
}

}  // namespace hotline::html

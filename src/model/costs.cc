#include "model/costs.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <unordered_map>

namespace hotline::model {
namespace {

// Strongly connected components of the call graph (Tarjan): the cycles of recursion.
std::vector<int> Components(const std::vector<std::vector<int>>& edges) {
  int n = static_cast<int>(edges.size()), counter = 0, components = 0;
  std::vector<int> index(n, -1), low(n, 0), component(n, -1), stack;
  std::vector<bool> on_stack(n, false);
  std::function<void(int)> visit = [&](int v) {
    index[v] = low[v] = counter++;
    stack.push_back(v);
    on_stack[v] = true;
    for (int w : edges[v]) {
      if (index[w] < 0) {
        visit(w);
        low[v] = std::min(low[v], low[w]);
      } else if (on_stack[w]) {
        low[v] = std::min(low[v], index[w]);
      }
    }
    if (low[v] == index[v]) {
      int w;
      do {
        w = stack.back();
        stack.pop_back();
        on_stack[w] = false;
        component[w] = components;
      } while (w != v);
      ++components;
    }
  };
  for (int v = 0; v < n; ++v)
    if (index[v] < 0) visit(v);
  return component;
}

// Solves (I − P) x = c by Gaussian elimination with partial pivoting. False when singular.
bool Solve(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>* x) {
  size_t n = b.size();
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < n; ++r)
      if (std::fabs(a[r][col]) > std::fabs(a[pivot][col])) pivot = r;
    if (std::fabs(a[pivot][col]) < 1e-12) return false;
    std::swap(a[pivot], a[col]);
    std::swap(b[pivot], b[col]);
    for (size_t r = col + 1; r < n; ++r) {
      double f = a[r][col] / a[col][col];
      if (f == 0) continue;
      for (size_t k = col; k < n; ++k) a[r][k] -= f * a[col][k];
      b[r] -= f * b[col];
    }
  }
  x->assign(n, 0);
  for (size_t i = n; i-- > 0;) {
    double sum = b[i];
    for (size_t k = i + 1; k < n; ++k) sum -= a[i][k] * (*x)[k];
    (*x)[i] = sum / a[i][i];
  }
  return true;
}

}  // namespace

Expected<CostModel> CostsFromCounts(const format::RawProfile& raw, const symbolize::CodeMap& code) {
  if (raw.line_counts.empty()) return Status::Error("the profile has no exact line counts");
  std::map<std::pair<std::string, uint32_t>, uint64_t> executions;
  for (const auto& file : raw.line_counts)
    for (const auto& [line, count] : file.lines) executions[{file.file, uint32_t(line)}] += count;
  auto count_at = [&](const std::string& file, uint32_t line) -> uint64_t {
    auto it = executions.find({file, line});
    return it == executions.end() ? 0 : it->second;
  };

  // The functions gcov counted, with their explicit costs from the code map.
  std::unordered_map<std::string, int> index;
  CostModel model;
  for (const auto& f : raw.function_counts) {
    if (index.count(f.name)) continue;
    index[f.name] = static_cast<int>(model.functions.size());
    model.functions.push_back(FunctionCost{f.name, f.executions, 0, 0, -1});
  }
  int n = static_cast<int>(model.functions.size());
  if (n == 0) return Status::Error("the profile has no function counts");
  std::vector<std::map<int, double>> calls(n);  // calls[f][g]: calls from f to g
  for (const symbolize::CodeFunction& cf : code.functions) {
    auto it = index.find(cf.name);
    if (it == index.end()) continue;
    FunctionCost& f = model.functions[it->second];
    for (const symbolize::CodeLine& l : cf.lines)
      f.explicit_cost += double(count_at(l.file, l.line)) * l.instructions;
    for (const symbolize::CodeCall& c : cf.calls) {
      auto callee = index.find(c.callee);
      if (callee != index.end())
        calls[it->second][callee->second] += double(count_at(c.file, c.line)) * c.instructions;
    }
  }

  // A call on a line that also holds a condition is charged every execution of the line; where
  // that makes more calls into g than gcov counted executions of g, the estimates are scaled
  // down to gcov's exact total.
  for (int g = 0; g < n; ++g) {
    double into = 0;
    for (int f = 0; f < n; ++f)
      if (auto k = calls[f].find(g); k != calls[f].end()) into += k->second;
    double exact = double(model.functions[g].calls);
    if (into <= exact || into == 0) continue;
    for (int f = 0; f < n; ++f)
      if (auto k = calls[f].find(g); k != calls[f].end()) k->second *= exact / into;
  }

  // x_f, the implicit cost of one call of f: x = c + P x, P[f][g] = calls(f→g) / calls(f).
  std::vector<std::vector<double>> a(n, std::vector<double>(n, 0));
  std::vector<double> b(n, 0);
  std::vector<std::vector<int>> edges(n);
  for (int f = 0; f < n; ++f) {
    a[f][f] = 1;
    double calls_f = double(model.functions[f].calls);
    if (calls_f == 0) continue;
    b[f] = model.functions[f].explicit_cost / calls_f;
    for (const auto& [g, k] : calls[f]) {
      a[f][g] -= k / calls_f;
      if (k > 0) edges[f].push_back(g);
    }
  }
  std::vector<double> x;
  if (!Solve(a, b, &x))
    return Status::Error("the call counts are inconsistent (the system is singular)");

  // A function's implicit cost counts the calls into it from outside its cycle of recursion
  // (its outermost activations); every member of a cycle of mutual recursion shares the cost
  // of the whole cycle, as gprof's cycles do.
  std::vector<int> component = Components(edges);
  std::vector<double> external(n, 0);
  for (int f = 0; f < n; ++f) {
    double inside = 0;
    for (int g = 0; g < n; ++g) {
      auto k = calls[g].find(f);
      if (k != calls[g].end() && component[g] == component[f]) inside += k->second;
    }
    external[f] = std::max(0.0, double(model.functions[f].calls) - inside);
  }
  std::map<int, double> cycle_cost;
  std::map<int, int> cycle_size;
  for (int f = 0; f < n; ++f) {
    cycle_cost[component[f]] += x[f] * external[f];
    ++cycle_size[component[f]];
  }
  int cycles = 0;
  std::map<int, int> cycle_number;
  for (int f = 0; f < n; ++f) {
    FunctionCost& fc = model.functions[f];
    fc.implicit_cost = cycle_cost[component[f]];
    if (cycle_size[component[f]] > 1) {
      auto [it, added] = cycle_number.try_emplace(component[f], cycles);
      if (added) ++cycles;
      fc.cycle = it->second;
    }
    model.total += fc.explicit_cost;
  }
  std::sort(model.functions.begin(), model.functions.end(),
            [](const FunctionCost& p, const FunctionCost& q) {
              return p.implicit_cost > q.implicit_cost;
            });
  return model;
}

}  // namespace hotline::model

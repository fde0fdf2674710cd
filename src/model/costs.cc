#include "model/costs.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

namespace hotline::model {
namespace {

// Strongly connected components of the call graph (Tarjan's algorithm, without recursion: a
// call chain can be as long as the program has functions). Components are numbered in the
// order they complete, which puts every function's callees in its own or an earlier one.
std::vector<int> Components(const std::vector<std::vector<int>>& edges) {
  int n = static_cast<int>(edges.size()), counter = 0, components = 0;
  std::vector<int> index(n, -1), low(n, 0), component(n, -1), stack;
  std::vector<bool> on_stack(n, false);
  std::vector<std::pair<int, size_t>> walk;  // (function, next edge to follow)
  for (int root = 0; root < n; ++root) {
    if (index[root] >= 0) continue;
    walk.emplace_back(root, 0);
    while (!walk.empty()) {
      auto& [v, next] = walk.back();
      if (next == 0 && index[v] < 0) {
        index[v] = low[v] = counter++;
        stack.push_back(v);
        on_stack[v] = true;
      }
      if (next < edges[v].size()) {
        int w = edges[v][next++];
        if (index[w] < 0) {
          walk.emplace_back(w, 0);
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
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
      int done = v;
      walk.pop_back();
      if (!walk.empty()) low[walk.back().first] = std::min(low[walk.back().first], low[done]);
    }
  }
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

Expected<CostModel> CostsFromCounts(const format::RawProfile& raw, const symbolize::CodeMap& code,
                                    const Profile* traced) {
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
  std::unordered_map<std::string, const format::RawFunctionInstructions*> counted;
  for (const format::RawFunctionInstructions& f : raw.function_instructions) counted[f.name] = &f;
  model.counted = !counted.empty();
  for (const format::RawFunctionInstructions& f : raw.function_instructions) {
    model.uncounted += f.uncounted;
    model.unbounded |= f.unbounded;
  }
  for (const symbolize::CodeFunction& cf : code.functions) {
    auto it = index.find(cf.name);
    if (it == index.end()) continue;
    FunctionCost& f = model.functions[it->second];
    if (auto c = counted.find(cf.name); c != counted.end()) {
      f.explicit_cost = double(c->second->executed);
      f.uncounted = c->second->uncounted > 0 || c->second->unbounded;
    } else if (!model.counted) {
      for (const symbolize::CodeLine& l : cf.lines)
        f.explicit_cost += double(count_at(l.file, l.line)) * l.instructions;
    }
    for (const symbolize::CodeCall& c : cf.calls) {
      auto callee = index.find(c.callee);
      if (callee != index.end())
        calls[it->second][callee->second] += double(count_at(c.file, c.line)) * c.instructions;
    }
  }

  // Traced calls are exact: between two traced functions, the trace's count replaces the
  // estimate.
  std::set<std::pair<int, int>> exact_edges;
  if (traced && traced->summary.traced) {
    for (uint32_t f = 0; f < traced->functions.size(); ++f) {
      auto caller = index.find(traced->functions[f].name);
      if (caller == index.end() || !traced->functions[f].calls_exact) continue;
      for (const CallEdge& e : traced->callees[f]) {
        const Function& child = traced->function(e.child);
        auto callee = index.find(child.name);
        if (callee == index.end() || !child.calls_exact) continue;
        calls[caller->second][callee->second] = double(e.calls);
        exact_edges.insert({caller->second, callee->second});
      }
    }
  }
  // A call on a line that also holds a condition is charged every execution of the line; where
  // that makes more calls into g than gcov counted executions of g (less the exact ones), the
  // estimates are scaled down to that total.
  std::vector<double> estimated(n, 0), known(n, 0);
  for (int f = 0; f < n; ++f)
    for (const auto& [g, k] : calls[f]) (exact_edges.count({f, g}) ? known : estimated)[g] += k;
  for (int f = 0; f < n; ++f)
    for (auto& [g, k] : calls[f]) {
      if (exact_edges.count({f, g})) continue;
      double left = std::max(0.0, double(model.functions[g].calls) - known[g]);
      if (estimated[g] > left && estimated[g] > 0) k *= left / estimated[g];
    }

  // x_f, the implicit cost of one call of f: x = c + P x, P[f][g] = calls(f→g) / calls(f).
  // Solved one strongly connected component at a time, callees' components first: outside its
  // own component a function only calls functions already solved, so each component is a small
  // system of its own, and memory and time grow with the graph, not with its square.
  std::vector<std::vector<int>> edges(n);
  for (int f = 0; f < n; ++f)
    for (const auto& [g, k] : calls[f])
      if (k > 0) edges[f].push_back(g);
  std::vector<int> component = Components(edges);
  int components = n ? *std::max_element(component.begin(), component.end()) + 1 : 0;
  std::vector<std::vector<int>> members(components);
  for (int f = 0; f < n; ++f) members[component[f]].push_back(f);
  std::vector<double> x(n, 0);
  std::vector<int> position(n, -1);
  for (const std::vector<int>& group : members) {
    size_t m = group.size();
    for (size_t i = 0; i < m; ++i) position[group[i]] = int(i);
    std::vector<std::vector<double>> a(m, std::vector<double>(m, 0));
    std::vector<double> b(m, 0);
    for (size_t i = 0; i < m; ++i) {
      int f = group[i];
      a[i][i] = 1;
      double calls_f = double(model.functions[f].calls);
      if (calls_f == 0) continue;
      b[i] = model.functions[f].explicit_cost / calls_f;
      for (const auto& [g, k] : calls[f]) {
        if (component[g] == component[f]) {
          a[i][size_t(position[g])] -= k / calls_f;
        } else {
          b[i] += k / calls_f * x[g];  // a callee solved before
        }
      }
    }
    std::vector<double> solved;
    if (!Solve(a, b, &solved))
      return Status::Error("the call counts are inconsistent (the system is singular)");
    for (size_t i = 0; i < m; ++i) x[group[i]] = solved[i];
  }

  // A function's implicit cost counts the calls into it from outside its cycle of recursion
  // (its outermost activations); every member of a cycle of mutual recursion shares the cost
  // of the whole cycle, as gprof's cycles do.
  std::vector<double> inside(n, 0);
  for (int f = 0; f < n; ++f)
    for (const auto& [g, k] : calls[f])
      if (component[g] == component[f]) inside[g] += k;
  std::vector<double> external(n, 0);
  for (int f = 0; f < n; ++f)
    external[f] = std::max(0.0, double(model.functions[f].calls) - inside[f]);
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

#include "coverage/block_flow.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <set>

#include "coverage/linear_program.h"

namespace hotline::coverage {
namespace {

using Int = __int128;
constexpr uint64_t kNoBound = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kMostCount = uint64_t(1) << 62;  // beyond any count a run can reach

Int Gcd(Int a, Int b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    Int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// A rational number, kept reduced with a positive denominator. The coefficients stay small
// (the equations' are 0, ±1 or a counter's increments); the right-hand sides are counts.
struct Q {
  Int n = 0, d = 1;
  static Q Of(Int n, Int d = 1) {
    if (d < 0) n = -n, d = -d;
    Int g = Gcd(n, d);
    if (g > 1) n /= g, d /= g;
    return Q{n, d};
  }
  bool zero() const { return n == 0; }
  Q operator-(const Q& o) const { return Of(n * o.d - o.n * d, d * o.d); }
  Q operator*(const Q& o) const { return Of(n * o.n, d * o.d); }
  Q operator/(const Q& o) const { return Of(n * o.d, d * o.n); }
};

using Row = std::map<int, Q>;  // unknown → coefficient; the right-hand side under key -1
constexpr int kRhs = -1;

class Solver {
 public:
  explicit Solver(const FlowGraph& g) : g_(g), edge_(g.edges.size()), block_(size_t(g.blocks)) {
    in_.resize(size_t(g.blocks));
    out_.resize(size_t(g.blocks));
    for (size_t e = 0; e < g.edges.size(); ++e) {
      if (g.edges[e].to >= 0) in_[size_t(g.edges[e].to)].push_back(int(e));
      if (g.edges[e].from >= 0) out_[size_t(g.edges[e].from)].push_back(int(e));
    }
  }

  FlowCounts solve() {
    for (int round = 0; consistent_ && round < 64; ++round) {
      propagate();
      if (consistent_ && unreached()) continue;
      if (!consistent_ || !eliminate()) break;
    }
    if (consistent_) settleBlocks();
    FlowCounts result;
    result.consistent = consistent_;
    result.exact.resize(block_.size());
    result.most.assign(block_.size(), 0);
    if (!consistent_) return result;
    for (size_t b = 0; b < block_.size(); ++b)
      if (block_[b]) result.exact[b] = uint64_t(*block_[b]);
    bound(result);
    return result;
  }

  // Σ weight × count of the blocks, if the equations fix it: the form −Σ w·(in-edges) reduced
  // by the equations keeps its value; with no unknown left, the sum is its right-hand side.
  std::optional<uint64_t> sum(const std::vector<std::pair<int, uint64_t>>& weighted) const {
    Row form = reduced(weighted);
    bool fixed = std::all_of(form.begin(), form.end(),
                             [](const auto& kv) { return kv.first == kRhs || kv.second.zero(); });
    auto rhs = form.find(kRhs);
    Q value = rhs == form.end() ? Q{} : rhs->second;
    if (!fixed || value.d != 1 || value.n < 0 || value.n > Int(kMostCount)) return std::nullopt;
    return uint64_t(value.n);
  }

  // The least and the most Σ weight × count can be, over every count the equations allow (each
  // edge's ≥ 0): a linear program in the unknowns the equations leave free. None when it is
  // unbounded or too large to solve here (the per-block bounds stand then).
  std::optional<std::pair<uint64_t, uint64_t>> range(
      const std::vector<std::pair<int, uint64_t>>& weighted) const {
    if (!program()) return std::nullopt;
    Row form = reduced(weighted);  // F = rhs − Σ form[j] · f_j over the free unknowns
    std::vector<double> objective(columns_.size(), 0);
    for (const auto& [k, q] : form)
      if (k != kRhs && !q.zero()) {
        auto column = columns_.find(k);
        if (column == columns_.end()) return std::nullopt;
        objective[column->second] = -double(q.n) / double(q.d);
      }
    std::optional<double> best = program_->maximize(objective);
    for (double& c : objective) c = -c;
    std::optional<double> worst = program_->maximize(objective);  // −(the least)
    if (!best || !worst) return std::nullopt;
    auto rhs = form.find(kRhs);
    double constant = rhs == form.end() ? 0 : double(rhs->second.n) / double(rhs->second.d);
    // Counts are whole: the most is the program's best rounded down and the least its worst
    // rounded up, each with room for the doubles' error.
    auto slack = [](double v) { return 1e-6 * std::max(1.0, std::fabs(v)); };
    double most = std::floor(constant + *best + slack(constant + *best));
    double least = std::max(0.0, std::ceil(constant - *worst - slack(constant - *worst)));
    if (most < least || most >= double(kMostCount)) return std::nullopt;
    return std::pair{uint64_t(least), uint64_t(most)};
  }

 private:
  void setEdge(int e, Int v) {
    auto& slot = edge_[size_t(e)];
    if (v < 0 || v > Int(kMostCount) || (slot && *slot != v)) consistent_ = false;
    if (!slot) slot = v, changed_ = true;
  }
  void setBlock(int b, Int v) {
    auto& slot = block_[size_t(b)];
    if (v < 0 || v > Int(kMostCount) || (slot && *slot != v)) consistent_ = false;
    if (!slot) slot = v, changed_ = true;
  }

  // Known sum of a side's edges, and the one unknown edge if there is exactly one (-1: none,
  // -2: more than one).
  std::pair<Int, int> side(const std::vector<int>& edges) const {
    Int sum = 0;
    int unknown = -1;
    for (int e : edges) {
      if (edge_[size_t(e)]) {
        sum += *edge_[size_t(e)];
      } else {
        unknown = unknown == -1 ? e : -2;
      }
    }
    return {sum, unknown};
  }

  void propagate() {
    changed_ = true;
    while (changed_ && consistent_) {
      changed_ = false;
      for (const FlowGraph::Counter& c : g_.counters) {
        std::map<int, Int> unknown;  // block → its increments there
        Int known = 0;
        for (const auto& [b, m] : c.sites) {
          if (block_[size_t(b)]) {
            known += *block_[size_t(b)] * Int(m);
          } else {
            unknown[b] += Int(m);
          }
        }
        Int rest = Int(c.value) - known;
        if (unknown.empty()) {
          if (rest != 0) consistent_ = false;
        } else if (unknown.size() == 1) {
          auto [b, m] = *unknown.begin();
          if (m == 0 || rest % m != 0) {
            consistent_ = false;
          } else {
            setBlock(b, rest / m);
          }
        }
      }
      for (int b = 0; b < g_.blocks; ++b) {
        for (const std::vector<int>* edges : {&in_[size_t(b)], &out_[size_t(b)]}) {
          auto [sum, unknown] = side(*edges);
          if (unknown == -1) setBlock(b, sum);
          if (!block_[size_t(b)] || unknown == -1) continue;
          if (unknown >= 0) {
            setEdge(unknown, *block_[size_t(b)] - sum);
          } else if (*block_[size_t(b)] == sum) {
            for (int e : *edges)  // nothing left for them: counts are never negative
              if (!edge_[size_t(e)]) setEdge(e, 0);
          }
        }
      }
    }
  }

  // Flow starts where the function is entered: a block no entry can reach along edges that may
  // carry some count never runs (a loop the equations alone would leave open, in a function
  // that was not called). True if that fixed an unknown.
  bool unreached() {
    std::vector<bool> reached(block_.size(), false);
    std::vector<int> todo;
    auto may_run = [&](int e) { return !edge_[size_t(e)] || *edge_[size_t(e)] > 0; };
    for (size_t e = 0; e < g_.edges.size(); ++e) {
      int to = g_.edges[e].to;
      if (g_.edges[e].from == FlowGraph::kOutside && to >= 0 && may_run(int(e)) &&
          !reached[size_t(to)])
        reached[size_t(to)] = true, todo.push_back(to);
    }
    while (!todo.empty()) {
      int b = todo.back();
      todo.pop_back();
      if (block_[size_t(b)] && *block_[size_t(b)] == 0) continue;
      for (int e : out_[size_t(b)]) {
        int to = g_.edges[size_t(e)].to;
        if (to >= 0 && may_run(e) && !reached[size_t(to)])
          reached[size_t(to)] = true, todo.push_back(to);
      }
    }
    changed_ = false;
    for (int b = 0; b < g_.blocks; ++b) {
      if (reached[size_t(b)]) continue;
      setBlock(b, 0);
      for (int e : in_[size_t(b)]) setEdge(e, 0);
      for (int e : out_[size_t(b)]) setEdge(e, 0);
    }
    return changed_;
  }

  // Adds to `row` the block's count: its in-edges, the known ones on the right-hand side.
  void addBlock(Row& row, int b, Int times) const {
    if (block_[size_t(b)]) {
      row[kRhs] = row[kRhs] - Q::Of(*block_[size_t(b)] * times);
      return;
    }
    for (int e : in_[size_t(b)]) {
      if (edge_[size_t(e)]) {
        row[kRhs] = row[kRhs] - Q::Of(*edge_[size_t(e)] * times);
      } else {
        Q& q = row[e];
        q = q - Q::Of(-times);
      }
    }
  }

  // Gaussian elimination over what propagation left; true if it fixed an unknown.
  bool eliminate() {
    std::vector<Row> rows;
    auto keep = [&](Row row) {
      for (auto it = row.begin(); it != row.end();) it = it->second.zero() ? row.erase(it) : ++it;
      bool has_unknown =
          std::any_of(row.begin(), row.end(), [](const auto& kv) { return kv.first != kRhs; });
      if (has_unknown) rows.push_back(std::move(row));
    };
    for (int b = 0; b < g_.blocks; ++b) {
      Row flow;  // Σ in − Σ out = 0
      flow[kRhs] = Q{};
      addBlock(flow, b, 1);
      for (int e : out_[size_t(b)]) {
        if (edge_[size_t(e)]) {
          flow[kRhs] = flow[kRhs] - Q::Of(-*edge_[size_t(e)]);
        } else {
          Q& q = flow[e];
          q = q - Q::Of(1);
        }
      }
      keep(std::move(flow));
      if (block_[size_t(b)]) {
        Row in;  // Σ in = the block's count
        in[kRhs] = Q::Of(*block_[size_t(b)]);
        for (int e : in_[size_t(b)]) {
          if (edge_[size_t(e)]) {
            in[kRhs] = in[kRhs] - Q::Of(*edge_[size_t(e)]);
          } else {
            Q& q = in[e];
            q = q - Q::Of(-1);
          }
        }
        keep(std::move(in));
      }
    }
    for (const FlowGraph::Counter& c : g_.counters) {
      Row row;
      row[kRhs] = Q::Of(Int(c.value));
      for (const auto& [b, m] : c.sites) addBlock(row, b, Int(m));
      keep(std::move(row));
    }
    basis_.clear();
    pivots_.clear();
    if (rows.empty()) return false;
    // Reduced row echelon form, pivoting on the lowest unknown of each row in turn.
    std::vector<int> pivots;
    size_t rank = 0;
    for (size_t r = 0; r < rows.size() && consistent_; ++r) {
      Row& row = rows[r];
      for (size_t p = 0; p < rank; ++p) reduce(row, rows[p], pivots[p]);
      auto first = std::find_if(row.begin(), row.end(), [](const auto& kv) {
        return kv.first != kRhs && !kv.second.zero();
      });
      if (first == row.end()) {
        auto rhs = row.find(kRhs);
        if (rhs != row.end() && !rhs->second.zero()) consistent_ = false;  // 0 = c ≠ 0
        continue;
      }
      int pivot = first->first;
      Q scale = first->second;
      for (auto& [k, q] : row) q = q / scale;
      for (size_t p = 0; p < rank; ++p) reduce(rows[p], row, pivot);
      std::swap(rows[rank], row);
      pivots.push_back(pivot);
      ++rank;
    }
    if (!consistent_) return false;
    rows.resize(rank);
    basis_ = rows;
    pivots_ = pivots;
    bool fixed = false;
    for (size_t p = 0; p < rank; ++p) {
      const Row& row = rows[p];
      bool alone = std::all_of(row.begin(), row.end(), [&](const auto& kv) {
        return kv.first == kRhs || kv.first == pivots[p] || kv.second.zero();
      });
      if (!alone) continue;
      auto rhs = row.find(kRhs);
      Q value = rhs == row.end() ? Q{} : rhs->second;
      if (value.d != 1) {
        consistent_ = false;  // a count is a whole number
        return false;
      }
      changed_ = false;
      setEdge(pivots[p], value.n);
      fixed |= changed_;
    }
    return fixed;
  }

  // A block whose edges are not all known can still have a known count: the sum of its
  // in-edges may follow from the equations though each edge does not.
  void settleBlocks() {
    for (int b = 0; b < g_.blocks; ++b) {
      if (block_[size_t(b)]) continue;
      // The form −(Σ in) as a row: its unknown in-edges at −1, the known ones' sum on the right.
      // Reducing by the equations keeps its value; with no unknown left, Σ in is the right side.
      Row sum;
      sum[kRhs] = Q{};
      addBlock(sum, b, -1);
      for (size_t p = 0; p < basis_.size(); ++p) reduce(sum, basis_[p], pivots_[p]);
      bool fixed = std::all_of(sum.begin(), sum.end(),
                               [](const auto& kv) { return kv.first == kRhs || kv.second.zero(); });
      if (!fixed) continue;
      auto rhs = sum.find(kRhs);
      Q value = rhs == sum.end() ? Q{} : rhs->second;
      if (value.d != 1) {
        consistent_ = false;
        return;
      }
      setBlock(b, value.n);
    }
  }

  // The form −Σ w·(the blocks' in-edges) reduced by the equations: its value is kept, and only
  // unknowns no equation fixes are left in it.
  Row reduced(const std::vector<std::pair<int, uint64_t>>& weighted) const {
    Row form;
    form[kRhs] = Q{};
    for (const auto& [b, w] : weighted) addBlock(form, b, -Int(w));
    for (size_t p = 0; p < basis_.size(); ++p) reduce(form, basis_[p], pivots_[p]);
    return form;
  }

  // The linear program over the free unknowns, made once: each equation's pivot unknown is its
  // right-hand side less its free unknowns, and must stay ≥ 0.
  const LinearProgram* program() const {
    if (program_made_) return program_ ? &*program_ : nullptr;
    program_made_ = true;
    std::set<int> pivots(pivots_.begin(), pivots_.end());
    for (size_t e = 0; e < edge_.size(); ++e)
      if (!edge_[e] && !pivots.count(int(e))) columns_.emplace(int(e), columns_.size());
    if (basis_.size() * (columns_.size() + 1) > 400'000) return nullptr;
    std::vector<std::vector<double>> a(basis_.size(), std::vector<double>(columns_.size(), 0));
    std::vector<double> b(basis_.size(), 0);
    for (size_t p = 0; p < basis_.size(); ++p)
      for (const auto& [k, q] : basis_[p]) {
        double v = double(q.n) / double(q.d);
        if (k == kRhs)
          b[p] = v;
        else if (k != pivots_[p])
          a[p][columns_.at(k)] = v;
      }
    program_.emplace(a, b);
    return program_->feasible() ? &*program_ : nullptr;
  }

  static void reduce(Row& row, const Row& by, int pivot) {
    auto it = row.find(pivot);
    if (it == row.end() || it->second.zero()) return;
    Q factor = it->second;
    for (const auto& [k, q] : by) {
      Q& target = row[k];
      target = target - factor * q;
    }
    for (auto i = row.begin(); i != row.end();) i = i->second.zero() ? row.erase(i) : ++i;
  }

  // The most each undetermined block can have run: an edge runs at most as often as either of
  // its blocks, a block at most as often as all its in-edges or all its out-edges together.
  void bound(FlowCounts& result) const {
    std::vector<uint64_t> block(block_.size(), kNoBound), edge(edge_.size(), kNoBound);
    for (size_t b = 0; b < block_.size(); ++b)
      if (block_[b]) block[b] = uint64_t(*block_[b]);
    for (size_t e = 0; e < edge_.size(); ++e)
      if (edge_[e]) edge[e] = uint64_t(*edge_[e]);
    for (const FlowGraph::Counter& c : g_.counters)
      for (const auto& [b, m] : c.sites)
        if (m) block[size_t(b)] = std::min(block[size_t(b)], c.value / m);
    auto sum = [&](const std::vector<int>& edges) {
      uint64_t total = 0;
      for (int e : edges) {
        if (edge[size_t(e)] == kNoBound) return kNoBound;
        total = std::min(kMostCount, total + edge[size_t(e)]);
      }
      return total;
    };
    for (int round = 0; round < 2 * g_.blocks + 2; ++round) {
      bool moved = false;
      for (size_t e = 0; e < edge.size(); ++e) {
        if (edge_[e]) continue;
        const FlowGraph::Edge& x = g_.edges[e];
        uint64_t m = std::min(x.from >= 0 ? block[size_t(x.from)] : kNoBound,
                              x.to >= 0 ? block[size_t(x.to)] : kNoBound);
        if (m < edge[e]) edge[e] = m, moved = true;
      }
      for (size_t b = 0; b < block.size(); ++b) {
        if (block_[b]) continue;
        uint64_t m = std::min({block[b], sum(in_[b]), sum(out_[b])});
        if (m < block[b]) block[b] = m, moved = true;
      }
      if (!moved) break;
    }
    for (size_t b = 0; b < block.size(); ++b)
      if (!block_[b]) result.most[b] = block[b] >= kMostCount ? FlowCounts::kUnbounded : block[b];
  }

  const FlowGraph g_;  // a copy: sum() may be asked after the caller's graph is gone
  std::vector<std::vector<int>> in_, out_;
  std::vector<std::optional<Int>> edge_, block_;
  std::vector<Row> basis_;  // the last elimination's rows, reduced
  mutable bool program_made_ = false;
  mutable std::optional<LinearProgram> program_;
  mutable std::map<int, size_t> columns_;  // free unknown edge → the program's column
  std::vector<int> pivots_;
  bool consistent_ = true;
  bool changed_ = false;
};

}  // namespace

FlowCounts SolveFlow(const FlowGraph& graph) {
  auto solver = std::make_shared<Solver>(graph);
  FlowCounts counts = solver->solve();
  if (counts.consistent)
    counts.sum = [solver](const std::vector<std::pair<int, uint64_t>>& weighted) {
      return solver->sum(weighted);
    };
  if (counts.consistent)
    counts.range_of = [solver](const std::vector<std::pair<int, uint64_t>>& weighted) {
      return solver->range(weighted);
    };
  return counts;
}

}  // namespace hotline::coverage

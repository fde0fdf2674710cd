#include "coverage/linear_program.h"

#include <cmath>

namespace hotline::coverage {
namespace {

constexpr double kEpsilon = 1e-9;
constexpr int kArtificial = -1;  // the variable phase one adds to reach a feasible corner

}  // namespace

// Row i reads x_basic[i] = d[i][n+1] − Σ_j d[i][j] · x_nonbasic[j]; the objective rows read
// z = d[row][n+1] − Σ_j d[row][j] · x_nonbasic[j].
LinearProgram::LinearProgram(const std::vector<std::vector<double>>& a,
                             const std::vector<double>& b)
    : m_(b.size()),
      n_(a.empty() ? 0 : a.front().size()),
      d_(m_ + 2, std::vector<double>(n_ + 2, 0)),
      basic_(m_),
      nonbasic_(n_ + 1) {
  for (size_t i = 0; i < m_; ++i) {
    for (size_t j = 0; j < n_; ++j) d_[i][j] = a[i][j];
    d_[i][n_] = -1;  // the artificial variable's column
    d_[i][n_ + 1] = b[i];
    basic_[i] = int(n_ + i);  // the slacks
  }
  for (size_t j = 0; j < n_; ++j) nonbasic_[j] = int(j);
  nonbasic_[n_] = kArtificial;
  d_[m_ + 1][n_] = 1;  // phase one: minimise the artificial variable
  size_t worst = 0;
  for (size_t i = 1; i < m_; ++i)
    if (d_[i][n_ + 1] < d_[worst][n_ + 1]) worst = i;
  if (m_ == 0 || d_[worst][n_ + 1] > -kEpsilon) {
    feasible_ = true;  // x = 0 meets every constraint
    return;
  }
  Pivot(d_, basic_, nonbasic_, worst, n_);
  if (!Improve(d_, basic_, nonbasic_, m_ + 1, true) || d_[m_ + 1][n_ + 1] < -kEpsilon) return;
  // The artificial variable left at zero in the basis: swap it out.
  for (size_t i = 0; i < m_; ++i)
    if (basic_[i] == kArtificial) {
      size_t s = 0;
      for (size_t j = 1; j <= n_; ++j)
        if (d_[i][j] < d_[i][s] || (d_[i][j] == d_[i][s] && nonbasic_[j] < nonbasic_[s])) s = j;
      Pivot(d_, basic_, nonbasic_, i, s);
    }
  feasible_ = true;
}

void LinearProgram::Pivot(Table& d, std::vector<int>& basic, std::vector<int>& nonbasic, size_t r,
                          size_t s) {
  double inverse = 1.0 / d[r][s];
  for (size_t i = 0; i < d.size(); ++i) {
    if (i == r || std::fabs(d[i][s]) < kEpsilon * kEpsilon) continue;
    double factor = d[i][s] * inverse;
    for (size_t j = 0; j < d[i].size(); ++j)
      if (j != s) d[i][j] -= d[r][j] * factor;
    d[i][s] = -factor;
  }
  for (size_t j = 0; j < d[r].size(); ++j)
    if (j != s) d[r][j] *= inverse;
  d[r][s] = inverse;
  std::swap(basic[r], nonbasic[s]);
}

bool LinearProgram::Improve(Table& d, std::vector<int>& basic, std::vector<int>& nonbasic,
                            size_t row, bool phase_one) {
  size_t m = basic.size(), n = nonbasic.size() - 1;
  // Bland's rule on ties keeps degenerate corners from cycling; the cap is for rounding.
  for (size_t step = 0; step < 50 * (m + n + 1); ++step) {
    // The entering column: the most negative reduced cost (lowest index on ties: Bland).
    size_t s = n + 1;
    for (size_t j = 0; j <= n; ++j) {
      if (!phase_one && nonbasic[j] == kArtificial) continue;
      if (s == n + 1 || d[row][j] < d[row][s] ||
          (d[row][j] == d[row][s] && nonbasic[j] < nonbasic[s]))
        s = j;
    }
    if (s == n + 1 || d[row][s] > -kEpsilon) return true;
    // The leaving row: the tightest ratio.
    size_t r = m;
    for (size_t i = 0; i < m; ++i) {
      if (d[i][s] < kEpsilon) continue;
      if (r == m) {
        r = i;
        continue;
      }
      double here = d[i][n + 1] / d[i][s], best = d[r][n + 1] / d[r][s];
      if (here < best || (here == best && basic[i] < basic[r])) r = i;
    }
    if (r == m) return false;  // unbounded
    Pivot(d, basic, nonbasic, r, s);
  }
  return false;
}

std::optional<double> LinearProgram::maximize(const std::vector<double>& c) const {
  if (!feasible_) return std::nullopt;
  Table d = d_;
  std::vector<int> basic = basic_, nonbasic = nonbasic_;
  // The objective in the current nonbasic variables.
  std::vector<double>& z = d[m_];
  std::fill(z.begin(), z.end(), 0);
  for (size_t j = 0; j <= n_; ++j)
    if (nonbasic[j] >= 0 && size_t(nonbasic[j]) < n_) z[j] = -c[size_t(nonbasic[j])];
  for (size_t i = 0; i < m_; ++i) {
    if (basic[i] < 0 || size_t(basic[i]) >= n_ || c[size_t(basic[i])] == 0) continue;
    double weight = c[size_t(basic[i])];
    for (size_t j = 0; j <= n_ + 1; ++j) z[j] += weight * d[i][j];
  }
  if (!Improve(d, basic, nonbasic, m_, false)) return std::nullopt;
  return d[m_][n_ + 1];
}

}  // namespace hotline::coverage

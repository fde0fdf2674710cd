// The largest value of a linear objective over { x ≥ 0 : A x ≤ b }, by the simplex method
// (two phases: the first finds a feasible corner once, each objective then starts from it).
// Dense, in doubles: for the small systems coverage's flow equations leave open.
#pragma once

#include <optional>
#include <vector>

namespace hotline::coverage {

class LinearProgram {
 public:
  LinearProgram(const std::vector<std::vector<double>>& a, const std::vector<double>& b);

  bool feasible() const { return feasible_; }
  // max c·x; none when it is unbounded (or the constraints cannot be met, or rounding kept the
  // method from ending).
  std::optional<double> maximize(const std::vector<double>& c) const;

 private:
  using Table = std::vector<std::vector<double>>;
  static void Pivot(Table& d, std::vector<int>& basic, std::vector<int>& nonbasic, size_t r,
                    size_t s);
  // Improves the objective in row `row` until optimal (true); false when it is unbounded or
  // takes more steps than a problem of its size can need.
  static bool Improve(Table& d, std::vector<int>& basic, std::vector<int>& nonbasic, size_t row,
                      bool phase_one);

  size_t m_, n_;
  Table d_;  // (m + 2) × (n + 2): constraints, the objective, the phase-one objective
  std::vector<int> basic_, nonbasic_;
  bool feasible_ = false;
};

}  // namespace hotline::coverage

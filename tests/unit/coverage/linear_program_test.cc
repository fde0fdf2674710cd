// The simplex method coverage bounds its undetermined counts with (coverage/linear_program.h),
// on programs whose optimum is known.
#include "coverage/linear_program.h"

#include <gtest/gtest.h>

namespace hotline::coverage {
namespace {

TEST(LinearProgram, FindsTheBestCorner) {
  // x + y ≤ 4, x ≤ 3, y ≤ 2: max x + 2y = 6 at (2, 2); max x = 3.
  LinearProgram lp({{1, 1}, {1, 0}, {0, 1}}, {4, 3, 2});
  ASSERT_TRUE(lp.feasible());
  EXPECT_NEAR(*lp.maximize({1, 2}), 6, 1e-9);
  EXPECT_NEAR(*lp.maximize({1, 0}), 3, 1e-9);
}

TEST(LinearProgram, StartsFromACornerAwayFromZero) {
  // x ≥ 1 (−x ≤ −1) and x + y ≤ 5: the origin is not feasible; max −x = −1, max y = 4.
  LinearProgram lp({{-1, 0}, {1, 1}}, {-1, 5});
  ASSERT_TRUE(lp.feasible());
  EXPECT_NEAR(*lp.maximize({-1, 0}), -1, 1e-9);
  EXPECT_NEAR(*lp.maximize({0, 1}), 4, 1e-9);
}

TEST(LinearProgram, SaysWhatItCannotBound) {
  LinearProgram open({{1, -1}}, {1});  // x − y ≤ 1: y, and x with it, can grow forever
  ASSERT_TRUE(open.feasible());
  EXPECT_FALSE(open.maximize({1, 0}).has_value());
  LinearProgram none({{1}, {-1}}, {1, -2});  // x ≤ 1 and x ≥ 2
  EXPECT_FALSE(none.feasible());
  EXPECT_FALSE(none.maximize({1}).has_value());
}

}  // namespace
}  // namespace hotline::coverage

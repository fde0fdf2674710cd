// The quantiles against tabled values, and the intervals on cases worked by hand.
#include "analysis/statistics.h"

#include <gtest/gtest.h>

#include <vector>

namespace hotline::analysis {
namespace {

TEST(Statistics, NormalQuantileMatchesTables) {
  EXPECT_NEAR(NormalQuantile(0.975), 1.959964, 1e-6);
  EXPECT_NEAR(NormalQuantile(0.5), 0.0, 1e-9);
  EXPECT_NEAR(NormalQuantile(0.001), -3.090232, 1e-6);
  EXPECT_NEAR(NormalQuantile(0.9999), 3.719016, 1e-6);
}

TEST(Statistics, StudentQuantileMatchesTables) {
  EXPECT_NEAR(StudentQuantile(0.975, 10), 2.228139, 1e-5);
  EXPECT_NEAR(StudentQuantile(0.995, 4), 4.604095, 1e-5);
  EXPECT_NEAR(StudentQuantile(0.95, 1), 6.313752, 1e-5);
  EXPECT_NEAR(StudentQuantile(0.025, 30), -2.042272, 1e-5);
  // Many degrees of freedom: the normal.
  EXPECT_NEAR(StudentQuantile(0.975, 1e6), 1.959966, 1e-4);
}

TEST(Statistics, RatioOfMeansIsCentredOnTheRatioAndWidensWithSpread) {
  std::vector<double> base = {100, 102, 98, 101, 99}, next = {120, 122, 118, 121, 119};
  Interval i = RatioOfMeans(base, next, 0.95);
  EXPECT_LT(i.low, 0.2);
  EXPECT_GT(i.high, 0.2);
  EXPECT_GT(i.low, 0.15);  // a clear 20%
  std::vector<double> noisy = {80, 130, 95, 125, 70};
  Interval wide = RatioOfMeans(base, noisy, 0.95);
  EXPECT_LT(wide.low, 0);
  EXPECT_GT(wide.high, 0);
  // No spread at all: the ratio itself.
  std::vector<double> same = {50, 50}, double_it = {100, 100};
  Interval exact = RatioOfMeans(same, double_it, 0.95);
  EXPECT_DOUBLE_EQ(exact.low, 1.0);
  EXPECT_DOUBLE_EQ(exact.high, 1.0);
}

TEST(Statistics, PoissonRatioJudgesCountsBySize) {
  Interval clear = PoissonRatio(1000, 1.0, 1500, 1.0, 0.95);
  EXPECT_GT(clear.low, 0.3);
  Interval small = PoissonRatio(10, 1.0, 15, 1.0, 0.95);
  EXPECT_LT(small.low, 0);  // 10 against 15 samples is within their noise
}

}  // namespace
}  // namespace hotline::analysis

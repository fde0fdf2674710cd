// The complexity fits on synthetic data of known shape and known noise: each model is recovered
// with its coefficients, noise and narrow ranges give "undecided" and never a wrong model.
#include "analysis/complexity.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

namespace hotline::analysis {
namespace {

using Shape = std::function<double(double)>;

// `repeats` points per size, each the shape's time times (1 + noise·N(0,1)) (at least 1% of it).
std::vector<SizePoint> Make(const Shape& shape, const std::vector<uint64_t>& sizes, double noise,
                            int repeats, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<SizePoint> points;
  for (uint64_t n : sizes)
    for (int r = 0; r < repeats; ++r)
      points.push_back(SizePoint{n, shape(double(n)) * std::max(0.01, 1 + noise * normal(rng))});
  return points;
}

std::vector<uint64_t> Geometric(uint64_t from, uint64_t to, double factor) {
  std::vector<uint64_t> sizes;
  for (double n = double(from); n <= double(to) * 1.0001; n *= factor) sizes.push_back(uint64_t(n));
  return sizes;
}

struct Case {
  GrowthModel model;
  Shape shape;
  std::vector<uint64_t> sizes;
};

std::vector<Case> Cases() {
  std::vector<uint64_t> wide = Geometric(1000, 256000, 2);  // 9 sizes, 2.4 decades
  return {
      {GrowthModel::kConstant, [](double) { return 800.0; }, wide},
      {GrowthModel::kLog, [](double n) { return 30 + 25 * std::log2(n); }, wide},
      {GrowthModel::kLinear, [](double n) { return 5000 + 4 * n; }, wide},
      {GrowthModel::kNLogN, [](double n) { return 2 * n * std::log2(n); }, wide},
      {GrowthModel::kQuadratic, [](double n) { return 100 + 0.5 * n * n; }, wide},
      {GrowthModel::kCubic, [](double n) { return 1e-3 * n * n * n; }, wide},
      {GrowthModel::kExponential,
       [](double n) { return 200 + 3 * std::exp2(n); },
       {10, 12, 14, 16, 18, 20, 22}},
  };
}

TEST(Complexity, ExactDataGiveTheirModelAndCoefficients) {
  std::vector<SizePoint> points =
      Make([](double n) { return 1000 + 3 * n; }, Geometric(1000, 64000, 2), 0, 1, 1);
  ComplexityResult r = FitComplexity(points);
  ASSERT_EQ(r.verdict, FitVerdict::kDecided) << r.reason;
  const ModelFit& best = r.fits[r.best];
  EXPECT_EQ(best.model, GrowthModel::kLinear);
  EXPECT_NEAR(best.a, 1000, 1e-3);
  EXPECT_NEAR(best.b, 3, 1e-6);
  EXPECT_LT(best.cv_error, 1e-9);
  EXPECT_GT(r.margin, 4);  // errors count from 2%: the runner-up is off by about 10%
  EXPECT_EQ(r.n_min, 1000u);
  EXPECT_EQ(r.n_max, 64000u);
  EXPECT_EQ(r.sizes, 7u);
  EXPECT_NEAR(r.power_k, 1.0, 0.01);
}

TEST(Complexity, EveryModelIsRecoveredUnderThreePercentNoise) {
  for (const Case& c : Cases())
    for (uint32_t seed = 1; seed <= 40; ++seed) {
      ComplexityResult r = FitComplexity(Make(c.shape, c.sizes, 0.03, 3, seed));
      ASSERT_EQ(r.verdict, FitVerdict::kDecided)
          << GrowthModelName(c.model) << " seed " << seed << ": " << r.reason;
      EXPECT_EQ(r.fits[r.best].model, c.model) << GrowthModelName(c.model) << " seed " << seed
                                               << " gave " << GrowthModelName(r.fits[r.best].model);
    }
}

TEST(Complexity, AFractionalPowerIsThePower) {
  ComplexityResult r = FitComplexity(
      Make([](double n) { return 2 * std::pow(n, 1.5); }, Geometric(100, 100000, 2), 0.02, 3, 7));
  ASSERT_EQ(r.verdict, FitVerdict::kDecided) << r.reason;
  EXPECT_EQ(r.fits[r.best].model, GrowthModel::kPower);
  EXPECT_NEAR(r.fits[r.best].k, 1.5, 0.05);
}

TEST(Complexity, HeavyNoiseIsUndecidedNeverWrong) {
  int undecided = 0, runs = 0;
  for (const Case& c : Cases())
    for (uint32_t seed = 1; seed <= 30; ++seed) {
      ComplexityResult r = FitComplexity(Make(c.shape, c.sizes, 0.6, 1, seed));
      ++runs;
      if (r.verdict == FitVerdict::kUndecided) {
        ++undecided;
        EXPECT_GE(r.candidates.size(), 1u);
        continue;
      }
      ASSERT_EQ(r.verdict, FitVerdict::kDecided);
      // Steep shapes can still be told apart through 60% noise; a wrong one never may.
      EXPECT_EQ(r.fits[r.best].model, c.model)
          << GrowthModelName(c.model) << " seed " << seed << " decided as "
          << GrowthModelName(r.fits[r.best].model) << " k=" << r.fits[r.best].k
          << " error=" << r.fits[r.best].cv_error << " margin=" << r.margin;
    }
  EXPECT_GT(undecided, runs / 2);
}

TEST(Complexity, NoiseAroundAConstantIsNotConstant) {
  // Linear work hidden under noise ten times its size: no claim of O(1), nor of anything else.
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    std::exponential_distribution<double> spin(1.0);
    std::vector<SizePoint> points;
    for (uint64_t n : Geometric(1000, 128000, 2))
      points.push_back(SizePoint{n, 0.01 * double(n) + 10000 * spin(rng)});
    ComplexityResult r = FitComplexity(points);
    EXPECT_EQ(r.verdict, FitVerdict::kUndecided)
        << "seed " << seed << ": " << GrowthModelName(r.fits[r.best].model);
  }
}

TEST(Complexity, LessThanADecadeIsUndecided) {
  ComplexityResult r = FitComplexity(
      Make([](double n) { return 10 * n; }, {1000, 1500, 2000, 3000, 4000, 6000}, 0.01, 1, 3));
  EXPECT_EQ(r.verdict, FitVerdict::kUndecided);
  EXPECT_EQ(r.reason, "less than a decade of n");
  EXPECT_FALSE(r.candidates.empty());
}

TEST(Complexity, TooFewSizes) {
  ComplexityResult r =
      FitComplexity(Make([](double n) { return n; }, {1000, 10000, 100000}, 0.0, 10, 1));
  EXPECT_EQ(r.verdict, FitVerdict::kTooFewSizes);
  EXPECT_EQ(r.points, 30u);
  EXPECT_EQ(r.sizes, 3u);
  EXPECT_TRUE(r.fits.empty());
}

TEST(Complexity, ManyDistinctSizesAreBinned) {
  std::vector<SizePoint> points;
  for (uint64_t n = 100; n <= 200000; n += 97) points.push_back(SizePoint{n, 50.0 + 2.0 * n});
  ComplexityResult r = FitComplexity(points);
  ASSERT_EQ(r.verdict, FitVerdict::kDecided) << r.reason;
  EXPECT_EQ(r.fits[r.best].model, GrowthModel::kLinear);
  EXPECT_LE(r.sizes, 64u);
  EXPECT_EQ(r.points, points.size());
}

TEST(Complexity, ModelNames) {
  EXPECT_EQ(GrowthModelName(GrowthModel::kNLogN), "O(n log n)");
  EXPECT_EQ(GrowthModelName(GrowthModel::kExponential), "O(2^n)");
}

}  // namespace
}  // namespace hotline::analysis

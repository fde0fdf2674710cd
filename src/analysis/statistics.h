// The statistics behind `hotline diff`: how sure a change is, from few runs or from one.
#pragma once

#include <cstdint>
#include <span>

namespace hotline::analysis {

// The p-quantile of the standard normal distribution, 0 < p < 1 (Acklam's rational
// approximation, refined by one Newton step: error below 1e-9).
double NormalQuantile(double p);

// The mean of `v`; 0 when it is empty.
double Mean(std::span<const double> v);

// A confidence interval of a relative change, new/base − 1.
struct Interval {
  double low = 0, high = 0;
};

// The p-quantile of Student's t distribution with `df` degrees of freedom (df > 0), by
// bisection on its distribution function (the regularized incomplete beta function).
double StudentQuantile(double p, double df);

// The two-sided `level` interval of mean(next)/mean(base) − 1 from a few runs per side: Welch's
// t interval of the log of the ratio of means, its variance by the delta method
// (s²/(n·mean²) per side) and its degrees of freedom by Welch–Satterthwaite. With few runs its
// t tails are what keeps a corrected level honest: with 5 runs per side a 99.84% interval
// (95% over 31 rows) spans ±7.2 standard errors for t with 4 degrees of freedom, where a
// percentile bootstrap, normal in its tails, gives ±3.2. Needs two runs per side, means above 0.
Interval RatioOfMeans(std::span<const double> base, std::span<const double> next, double level);

// The two-sided `level` interval of (next_count / next_scale) / (base_count / base_scale) − 1
// for two sample counts, each Poisson: the normal interval of the log of the ratio. For one run
// per side, where only the sampling noise can be judged. Both counts above 0.
Interval PoissonRatio(uint64_t base_count, double base_scale, uint64_t next_count,
                      double next_scale, double level);

}  // namespace hotline::analysis

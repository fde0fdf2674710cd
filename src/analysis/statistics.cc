#include "analysis/statistics.h"

#include <algorithm>
#include <cmath>

namespace hotline::analysis {

double NormalQuantile(double p) {
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549732539343734e+00,
                                 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double low = 0.02425;
  double x;
  if (p < low) {
    double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - low) {
    double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  // One Newton step on Φ(x) = p.
  double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  double u = e * std::sqrt(2 * M_PI) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

namespace {

// The continued fraction of the incomplete beta function, evaluated by Lentz's method.
double BetaFraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::fabs(d) < kTiny ? kTiny : d);
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    for (int odd = 0; odd < 2; ++odd) {
      double numerator = odd ? -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
                             : m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
      d = 1 + numerator * d;
      d = 1 / (std::fabs(d) < kTiny ? kTiny : d);
      c = 1 + numerator / c;
      if (std::fabs(c) < kTiny) c = kTiny;
      h *= d * c;
      if (odd && std::fabs(d * c - 1) < 1e-14) return h;
    }
  }
  return h;
}

// I_x(a, b), the regularized incomplete beta function.
double RegularizedBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) +
                          b * std::log(1 - x));
  if (x < (a + 1) / (a + b + 2)) return front * BetaFraction(a, b, x) / a;
  return 1 - front * BetaFraction(b, a, 1 - x) / b;
}

// P(T ≤ t) for Student's t with `df` degrees of freedom.
double StudentDistribution(double t, double df) {
  double tail = 0.5 * RegularizedBeta(df / 2, 0.5, df / (df + t * t));
  return t >= 0 ? 1 - tail : tail;
}

double Variance(std::span<const double> v, double mean) {
  double sum = 0;
  for (double x : v) sum += (x - mean) * (x - mean);
  return sum / double(v.size() - 1);
}

}  // namespace

double Mean(std::span<const double> v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / double(v.size());
}

double StudentQuantile(double p, double df) {
  double low = -1e3, high = 1e3;
  for (int i = 0; i < 200 && high - low > 1e-10; ++i) {
    double mid = (low + high) / 2;
    (StudentDistribution(mid, df) < p ? low : high) = mid;
  }
  return (low + high) / 2;
}

Interval RatioOfMeans(std::span<const double> base, std::span<const double> next, double level) {
  double mean_base = Mean(base), mean_next = Mean(next);
  double ratio = mean_next / mean_base;
  // The variance of log(ratio), one part per side.
  double part_base = Variance(base, mean_base) / (double(base.size()) * mean_base * mean_base);
  double part_next = Variance(next, mean_next) / (double(next.size()) * mean_next * mean_next);
  double variance = part_base + part_next;
  if (variance <= 0) return {ratio - 1, ratio - 1};
  double df = variance * variance /
              (part_base * part_base / double(base.size() - 1) +
               part_next * part_next / double(next.size() - 1));
  double spread = StudentQuantile(1 - (1 - level) / 2, df) * std::sqrt(variance);
  return {ratio * std::exp(-spread) - 1, ratio * std::exp(spread) - 1};
}

Interval PoissonRatio(uint64_t base_count, double base_scale, uint64_t next_count,
                      double next_scale, double level) {
  double ratio = (double(next_count) / next_scale) / (double(base_count) / base_scale);
  double spread = NormalQuantile(1 - (1 - level) / 2) *
                  std::sqrt(1.0 / double(base_count) + 1.0 / double(next_count));
  return {ratio * std::exp(-spread) - 1, ratio * std::exp(spread) - 1};
}

}  // namespace hotline::analysis

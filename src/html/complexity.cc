// The complexity page's data (docs/complexity.md): per function and measure, the points
// (n, value) the fit saw, the curve of the decided model (or of each candidate when undecided)
// sampled over the sizes fitted, and the row `hotline report -X` prints. The page only maps
// these numbers to pixels: every curve value is ModelFit::predict's.
#include "report/complexity.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "html/parts.h"
#include "report/names.h"

namespace hotline::html {
namespace {

using analysis::FitVerdict;
using analysis::FunctionComplexity;

// Points drawn per plot at most: a hotline_size() profile can tag millions of calls.
constexpr size_t kMaxPoints = 2000;
// Samples of a curve between its sizes, evenly spaced on the plot's n axis.
constexpr int kCurveSamples = 64;

// The n axis is logarithmic when the sizes span a decade or more: n = 16 … 1024 evenly spread,
// not crowded into the left edge.
bool LogAxis(const FunctionComplexity& fc) {
  uint64_t lo = 0, hi = 0;
  for (const analysis::SizePoint& p : fc.points) {
    if (p.n == 0) continue;
    lo = lo ? std::min(lo, p.n) : p.n;
    hi = std::max(hi, p.n);
  }
  return lo > 0 && double(hi) >= 10 * double(lo);
}

// The curve of `fit` over [n_min, n_max]: evenly spaced samples on the axis, and every size that
// has points, so that the curve's value where a point is drawn is the model's prediction there.
nlohmann::json Curve(const analysis::ModelFit& fit, const analysis::ComplexityResult& r,
                     const std::set<uint64_t>& sizes, bool log_axis) {
  std::set<double> at(sizes.begin(), sizes.end());
  double lo = double(r.n_min), hi = double(r.n_max);
  for (int i = 0; i <= kCurveSamples; ++i) {
    double t = double(i) / kCurveSamples;
    at.insert(log_axis ? lo * std::pow(hi / lo, t) : lo + (hi - lo) * t);
  }
  nlohmann::json samples = nlohmann::json::array();
  for (double n : at) {
    if (n < lo || n > hi) continue;
    double v = fit.predict(n);
    if (std::isfinite(v)) samples.push_back({n, v});
  }
  return samples;
}

nlohmann::json Plot(const FunctionComplexity& fc) {
  const analysis::ComplexityResult& r = fc.result;
  bool log_axis = LogAxis(fc);
  // Sizes of 0 are not fitted (log n is undefined there) and have no place on a log axis.
  std::vector<analysis::SizePoint> shown;
  for (const analysis::SizePoint& p : fc.points)
    if (p.n > 0 || !log_axis) shown.push_back(p);
  size_t drawable = shown.size();
  nlohmann::json points = nlohmann::json::array();
  std::set<uint64_t> sizes;
  for (const analysis::SizePoint& p : shown) sizes.insert(p.n);
  // Evenly thinned beyond kMaxPoints; the page says how many are drawn.
  size_t step = (drawable + kMaxPoints - 1) / kMaxPoints;
  for (size_t i = 0; i < drawable; i += std::max<size_t>(step, 1))
    points.push_back({shown[i].n, shown[i].ns});

  // The median of each size, what the fit saw (docs/complexity.md), when a size has several.
  std::map<uint64_t, std::vector<double>> by_size;
  for (const analysis::SizePoint& p : shown) by_size[p.n].push_back(p.ns);
  nlohmann::json medians = nlohmann::json::array();
  bool repeated = false;
  for (auto& [n, values] : by_size) {
    std::sort(values.begin(), values.end());
    size_t m = values.size() / 2;
    medians.push_back({n, values.size() % 2 ? values[m] : (values[m - 1] + values[m]) / 2});
    repeated |= values.size() > 1;
  }
  if (!repeated) medians = nlohmann::json::array();

  nlohmann::json curves = nlohmann::json::array();
  if (r.verdict == FitVerdict::kDecided) {
    const analysis::ModelFit& best = r.fits[r.best];
    curves.push_back({{"model", report::ComplexityModelLabel(best)},
                      {"decided", true},
                      {"samples", Curve(best, r, sizes, log_axis)}});
  } else if (r.verdict == FitVerdict::kUndecided) {
    for (analysis::GrowthModel m : r.candidates)
      for (const analysis::ModelFit& fit : r.fits)
        if (fit.model == m) {
          curves.push_back({{"model", report::ComplexityModelLabel(fit)},
                            {"decided", false},
                            {"samples", Curve(fit, r, sizes, log_axis)}});
          break;
        }
  }
  report::ReportOptions text;  // the row as the terminal table prints it
  return {{"name", fc.name},
          {"short", report::ShortName(fc.name, false)},
          {"definition", fc.definition},
          {"counted", fc.counted()},
          {"row", report::ComplexityRow(fc, text)},
          {"log_n", log_axis},
          {"points", std::move(points)},
          {"points_total", fc.points.size()},
          {"points_left_out", fc.points.size() - drawable},
          {"medians", std::move(medians)},
          {"curves", std::move(curves)}};
}

int VerdictRank(FitVerdict v) {
  return v == FitVerdict::kDecided ? 0 : v == FitVerdict::kUndecided ? 1 : 2;
}

}  // namespace

void AddComplexity(const std::vector<FunctionComplexity>& fits, nlohmann::json& data,
                   ReportFiles& files) {
  // Decided rows first, then undecided, then too few sizes; within each, FitProfiles' order
  // (the largest cost first).
  std::vector<const FunctionComplexity*> order;
  for (const FunctionComplexity& fc : fits) order.push_back(&fc);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return VerdictRank(a->result.verdict) < VerdictRank(b->result.verdict);
  });
  nlohmann::json plots = nlohmann::json::array();
  for (const FunctionComplexity* fc : order) plots.push_back(Plot(*fc));
  files["data/complexity.js"] =
      DataScript("complexity", {{"columns", report::ComplexityColumns()}, {"plots", plots}});
  data["complexity"] = {{"plots", fits.size()}};
}

}  // namespace hotline::html

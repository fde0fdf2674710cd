#include "analysis/complexity.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "model/merge.h"

namespace hotline::analysis {
namespace {

constexpr GrowthModel kFixedModels[] = {GrowthModel::kLog,   GrowthModel::kLinear,
                                        GrowthModel::kNLogN, GrowthModel::kQuadratic,
                                        GrowthModel::kCubic, GrowthModel::kExponential};
// Beyond this, 2ⁿ is no longer a double; no program that ran has such a cost anyway.
constexpr uint64_t kMaxExponentialN = 1000;
// More distinct sizes than this are binned geometrically (hotline_size with many sizes).
constexpr size_t kMaxBins = 64;
// The power's exponent is searched in [kMinK, kMaxK].
constexpr double kMinK = 0.05, kMaxK = 6.0;

// ln g(n) for g of a model (power: n^k), so that g can be scaled without overflow.
double LogG(GrowthModel model, double n, double k) {
  double ln_n = std::log(n);
  switch (model) {
    case GrowthModel::kConstant:
      return 0;
    case GrowthModel::kLog:
      return n > 1 ? std::log(std::log2(n)) : -std::numeric_limits<double>::infinity();
    case GrowthModel::kLinear:
      return ln_n;
    case GrowthModel::kNLogN:
      return n > 1 ? ln_n + std::log(std::log2(n)) : -std::numeric_limits<double>::infinity();
    case GrowthModel::kQuadratic:
      return 2 * ln_n;
    case GrowthModel::kCubic:
      return 3 * ln_n;
    case GrowthModel::kExponential:
      return n * std::log(2.0);
    case GrowthModel::kPower:
      return k * ln_n;
  }
  return 0;
}

// One size: its n, the median time there, and the weight of its squared residual.
struct SizeSample {
  double n = 0, y = 0, w = 0;
};

struct Coefficients {
  double a = 0, b = 0, wsse = 0;
};

// Weighted least squares of y = a + b·g over `use` (mask), with a, b ≥ 0. g is scaled by its
// largest value over the samples used, so n³ or 2ⁿ stay well conditioned.
Coefficients FitLinear(const std::vector<SizeSample>& s, const std::vector<double>& log_g,
                       size_t skip, bool constant_only) {
  double s0 = 0, t0 = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == skip) continue;
    s0 += s[i].w;
    t0 += s[i].w * s[i].y;
  }
  auto wsse = [&](double a, double b, double scale) {
    double sum = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (i == skip) continue;
      double g = b > 0 ? std::exp(log_g[i] - scale) : 0;
      double r = s[i].y - a - b * g;
      sum += s[i].w * r * r;
    }
    return sum;
  };
  Coefficients constant{s0 > 0 ? t0 / s0 : 0, 0, 0};
  constant.wsse = wsse(constant.a, 0, 0);
  if (constant_only) return constant;
  double scale = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < s.size(); ++i)
    if (i != skip) scale = std::max(scale, log_g[i]);
  if (!std::isfinite(scale)) return constant;
  double s1 = 0, s2 = 0, t1 = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == skip) continue;
    double g = std::exp(log_g[i] - scale);
    s1 += s[i].w * g;
    s2 += s[i].w * g * g;
    t1 += s[i].w * g * s[i].y;
  }
  std::vector<Coefficients> tries{constant};
  double det = s0 * s2 - s1 * s1;
  if (det > 1e-12 * s0 * s2) {
    double b = (s0 * t1 - s1 * t0) / det;
    double a = (t0 - b * s1) / s0;
    if (a >= 0 && b >= 0) tries.push_back({a, b, 0});
  }
  if (s2 > 0 && t1 > 0) tries.push_back({0, t1 / s2, 0});  // through the origin
  Coefficients best = constant;
  for (Coefficients& c : tries) {
    c.wsse = wsse(c.a, c.b, scale);
    if (c.wsse < best.wsse) best = c;
  }
  best.b *= std::exp(-scale);  // back to the unscaled g
  best.b = std::isfinite(best.b) ? best.b : 0;
  return best;
}

struct PowerFit {
  Coefficients c;
  double k = 0;
};

PowerFit FitPower(const std::vector<SizeSample>& s, size_t skip) {
  std::vector<double> log_g(s.size());
  auto at = [&](double k) {
    for (size_t i = 0; i < s.size(); ++i) log_g[i] = LogG(GrowthModel::kPower, s[i].n, k);
    return PowerFit{FitLinear(s, log_g, skip, false), k};
  };
  PowerFit best = at(kMinK);
  for (double k = kMinK; k <= kMaxK + 1e-9; k += 0.05) {
    PowerFit f = at(k);
    if (f.c.wsse < best.c.wsse) best = f;
  }
  // Golden section around the best grid point.
  double lo = std::max(kMinK, best.k - 0.05), hi = std::min(kMaxK, best.k + 0.05);
  const double phi = (std::sqrt(5.0) - 1) / 2;
  for (int it = 0; it < 30; ++it) {
    double x1 = hi - phi * (hi - lo), x2 = lo + phi * (hi - lo);
    PowerFit f1 = at(x1), f2 = at(x2);
    if (f1.c.wsse < best.c.wsse) best = f1;
    if (f2.c.wsse < best.c.wsse) best = f2;
    if (f1.c.wsse < f2.c.wsse) {
      hi = x2;
    } else {
      lo = x1;
    }
  }
  return best;
}

double Median(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// The smallest time a residual is taken relative to: half the smallest time measured (a
// function absent from a run measured 0).
double TimeFloor(const std::vector<SizeSample>& s) {
  double least = 0;
  for (const SizeSample& x : s)
    if (x.y > 0 && (least == 0 || x.y < least)) least = x.y;
  return least > 0 ? least / 2 : 1;
}

// Points → one sample per size (the median of its times), binned geometrically when there are
// more sizes than kMaxBins. Sizes of 0 are left out (log n is not defined there).
std::vector<SizeSample> Summarise(std::span<const SizePoint> points, size_t* used) {
  std::vector<SizePoint> sorted;
  for (const SizePoint& p : points)
    if (p.n > 0 && std::isfinite(p.ns) && p.ns >= 0) sorted.push_back(p);
  *used = sorted.size();
  std::sort(sorted.begin(), sorted.end(),
            [](const SizePoint& a, const SizePoint& b) { return a.n < b.n; });
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (groups.empty() || sorted[groups.back().front()].n != sorted[i].n) groups.emplace_back();
    groups.back().push_back(i);
  }
  if (groups.size() > kMaxBins) {
    double lo = std::log(double(sorted.front().n)), hi = std::log(double(sorted.back().n));
    std::vector<std::vector<size_t>> bins(kMaxBins);
    for (size_t i = 0; i < sorted.size(); ++i) {
      size_t b = size_t((std::log(double(sorted[i].n)) - lo) / (hi - lo) * double(kMaxBins));
      bins[std::min(b, kMaxBins - 1)].push_back(i);
    }
    groups.clear();
    for (auto& b : bins)
      if (!b.empty()) groups.push_back(std::move(b));
  }
  std::vector<SizeSample> samples;
  for (const auto& g : groups) {
    std::vector<double> ns, n;
    for (size_t i : g) {
      ns.push_back(sorted[i].ns);
      n.push_back(double(sorted[i].n));
    }
    samples.push_back(SizeSample{Median(n), Median(ns), 0});
  }
  // Residuals relative to the time: timing noise grows with the time measured.
  double floor = TimeFloor(samples);
  for (SizeSample& s : samples) s.w = 1 / (std::max(s.y, floor) * std::max(s.y, floor));
  return samples;
}

// Fits `model` to all samples and, leaving each size out in turn, measures how well it
// predicts that size.
ModelFit Evaluate(GrowthModel model, const std::vector<SizeSample>& s) {
  ModelFit fit;
  fit.model = model;
  if (model == GrowthModel::kExponential && s.back().n > double(kMaxExponentialN)) return fit;
  fit.valid = true;
  double floor = TimeFloor(s);
  std::vector<double> log_g(s.size());
  for (size_t i = 0; i < s.size(); ++i) log_g[i] = LogG(model, s[i].n, 0);
  auto with = [&](std::tuple<double, double, double> abk) {
    ModelFit m = fit;
    std::tie(m.a, m.b, m.k) = abk;
    return m;
  };
  auto fit_once = [&](const std::vector<SizeSample>& w, size_t skip) {
    if (model == GrowthModel::kPower) {
      PowerFit p = FitPower(w, skip);
      return std::tuple{p.c.a, p.c.b, p.k};
    }
    Coefficients c = FitLinear(w, log_g, skip, model == GrowthModel::kConstant);
    return std::tuple{c.a, c.b, 0.0};
  };
  // Noise proportional to the time: weights 1/time², the model's time once there is a model
  // (weighting by the measured time alone would favour the points that came out low).
  auto fit_without = [&](size_t skip) {
    std::vector<SizeSample> w = s;
    auto abk = fit_once(w, skip);
    for (int round = 0; round < 3; ++round) {
      ModelFit m = with(abk);
      for (SizeSample& x : w) {
        double p = std::max(m.predict(x.n), floor);
        x.w = 1 / (p * p);
      }
      abk = fit_once(w, skip);
    }
    return abk;
  };
  ModelFit all = with(fit_without(s.size()));
  fit.a = all.a;
  fit.b = all.b;
  fit.k = all.k;
  double sq = 0, rel = 0;
  for (const SizeSample& x : s) {
    double r = x.y - fit.predict(x.n);
    sq += r * r;
  }
  fit.rms_ns = std::sqrt(sq / double(s.size()));
  // Each size predicted by the model fitted on the others: the error relative to the time
  // predicted, in the original units (no transformation of either).
  for (size_t i = 0; i < s.size(); ++i) {
    double p = with(fit_without(i)).predict(s[i].n);
    double e = (s[i].y - p) / std::max(p, floor);
    rel += e * e;
  }
  fit.cv_error = std::sqrt(rel / double(s.size()));
  fit.collapsed = model != GrowthModel::kConstant && fit.b <= 0;
  return fit;
}

}  // namespace

double ModelFit::predict(double n) const {
  if (model == GrowthModel::kConstant || b <= 0) return a;
  double lg = LogG(model, n, k);
  return a + (std::isfinite(lg) ? std::exp(std::log(b) + lg) : 0);
}

std::string GrowthModelName(GrowthModel model) {
  switch (model) {
    case GrowthModel::kConstant:
      return "O(1)";
    case GrowthModel::kLog:
      return "O(log n)";
    case GrowthModel::kLinear:
      return "O(n)";
    case GrowthModel::kNLogN:
      return "O(n log n)";
    case GrowthModel::kQuadratic:
      return "O(n^2)";
    case GrowthModel::kCubic:
      return "O(n^3)";
    case GrowthModel::kExponential:
      return "O(2^n)";
    case GrowthModel::kPower:
      return "O(n^k)";
  }
  return "?";
}

ComplexityResult FitComplexity(std::span<const SizePoint> points,
                               const ComplexityOptions& options) {
  ComplexityResult result;
  std::vector<SizeSample> s = Summarise(points, &result.points);
  result.sizes = s.size();
  if (!s.empty()) {
    result.n_min = uint64_t(s.front().n);
    result.n_max = uint64_t(s.back().n);
    for (const SizePoint& p : points)
      if (p.n > 0)
        result.n_min = std::min(result.n_min, p.n), result.n_max = std::max(result.n_max, p.n);
  }
  if (s.size() < std::max<uint32_t>(options.min_sizes, 4)) {
    result.verdict = FitVerdict::kTooFewSizes;
    result.reason = "fewer than " + std::to_string(options.min_sizes) + " sizes";
    return result;
  }
  size_t timed_sizes = 0;
  for (const SizeSample& x : s) timed_sizes += x.y > 0;
  if (timed_sizes < std::max<uint32_t>(options.min_sizes, 4)) {
    result.verdict = FitVerdict::kTooFewSizes;
    result.reason = "time measured at fewer than " + std::to_string(options.min_sizes) + " sizes";
    return result;
  }

  ModelFit constant = Evaluate(GrowthModel::kConstant, s);
  std::vector<ModelFit> growth;
  for (GrowthModel m : kFixedModels) {
    ModelFit f = Evaluate(m, s);
    if (f.valid && !f.collapsed) growth.push_back(f);
  }
  ModelFit power = Evaluate(GrowthModel::kPower, s);
  if (power.valid && !power.collapsed) result.power_k = power.k;
  auto by_error = [](const ModelFit& x, const ModelFit& y) { return x.cv_error < y.cv_error; };
  std::stable_sort(growth.begin(), growth.end(), by_error);

  // The fixed models, and the power only when none of them predicts within 10% and it predicts
  // clearly better than all of them: it contains O(1), O(n), O(n²), O(n³) and mimics the
  // others (n^1.1 looks like n log n), so it may not win on a tie.
  double r = options.min_margin;
  // Errors are compared above the resolution: among models that all predict within 2%, the
  // differences say more about the noise than about the shape.
  auto error = [&](const ModelFit& x) { return std::max(x.cv_error, options.resolution); };
  auto better = [&](const ModelFit& x, const ModelFit& y, double margin) {
    return error(x) * margin <= error(y);  // x clearly better than y
  };
  std::optional<ModelFit> grower;
  if (!growth.empty()) grower = growth.front();
  // An exponent within 0.1 of 1, 2 or 3 is that polynomial, which the fixed models judge.
  bool integer_k = std::fabs(power.k - std::round(power.k)) < 0.1 && std::round(power.k) <= 3;
  bool power_wins = power.valid && !power.collapsed && !integer_k &&
                    (!grower || (better(power, *grower, options.power_margin) &&
                                 grower->cv_error > options.named_error)) &&
                    better(power, constant, r);

  std::vector<ModelFit>& fits = result.fits;
  fits.push_back(constant);
  fits.insert(fits.end(), growth.begin(), growth.end());
  if (power_wins) fits.push_back(power);
  std::stable_sort(fits.begin(), fits.end(), by_error);
  auto index_of = [&](GrowthModel m) {
    for (size_t i = 0; i < fits.size(); ++i)
      if (fits[i].model == m) return i;
    return size_t(0);
  };

  double span = double(result.n_max) / double(result.n_min);
  auto spans_decade = [&](GrowthModel m) {
    if (m == GrowthModel::kExponential)
      return std::exp2(double(result.n_max - result.n_min)) >= options.min_span;
    return span >= options.min_span;
  };
  auto margin = [&](const ModelFit& best, const ModelFit& rival) {
    return error(rival) / error(best);
  };
  auto undecided = [&](std::string reason) {
    result.verdict = FitVerdict::kUndecided;
    result.reason = std::move(reason);
    auto add = [&](GrowthModel m) {
      if (std::find(result.candidates.begin(), result.candidates.end(), m) ==
          result.candidates.end())
        result.candidates.push_back(m);
    };
    add(fits[result.best].model);
    if (result.runner_up != result.best) add(fits[result.runner_up].model);
    for (const ModelFit& f : fits)
      if (error(f) <= error(fits[result.best]) * r) add(f.model);
    return result;
  };

  GrowthModel best_model = GrowthModel::kConstant;
  if (power_wins) {
    best_model = GrowthModel::kPower;
  } else if (grower && better(*grower, constant, r)) {
    best_model = grower->model;
  }
  result.best = index_of(best_model);
  // The runner-up: the best other fixed model (the power never is: it is the general form).
  result.runner_up = result.best;
  for (size_t i = 0; i < fits.size(); ++i)
    if (i != result.best && fits[i].model != GrowthModel::kPower) {
      result.runner_up = i;
      break;
    }
  if (power_wins && grower) result.runner_up = index_of(grower->model);
  const ModelFit& best = fits[result.best];
  result.margin = margin(best, fits[result.runner_up]);

  if (best_model == GrowthModel::kConstant) {
    // Nothing grows clearly faster: O(1) only if the constant predicts every size closely.
    if (best.cv_error > options.constant_error)
      return undecided("too much noise: nothing predicts within " +
                       std::to_string(int(std::lround(options.constant_error * 100))) + "%");
    if (!spans_decade(best_model)) return undecided("less than a decade of n");
    result.verdict = FitVerdict::kDecided;
    return result;
  }
  if (best.cv_error > options.max_error)
    return undecided("too much noise: the best model is off by " +
                     std::to_string(int(std::lround(best.cv_error * 100))) + "%");
  if (result.margin < r) return undecided("the models predict about as well");
  if (!spans_decade(best_model))
    return undecided(best_model == GrowthModel::kExponential ? "2^n spans less than a decade"
                                                             : "less than a decade of n");
  result.verdict = FitVerdict::kDecided;
  return result;
}

namespace {

struct CostSeries {
  FunctionComplexity fc;
  double largest = 0;
};

std::string Definition(const model::Profile& p, const model::Function& f) {
  if (!f.file.valid()) return "";
  return p.file(f.file).path + ":" + std::to_string(f.line);
}

// The series of function `key` in `in`, named after `f` when it is new.
CostSeries& SeriesOf(std::map<std::string, CostSeries>& in, const std::string& key,
                     const model::Profile& p, const model::Function& f,
                     FunctionComplexity::Source source, FunctionComplexity::Measure measure) {
  CostSeries& s = in[key];
  if (s.fc.name.empty()) {
    s.fc.name = f.name;
    s.fc.definition = Definition(p, f);
    s.fc.source = source;
    s.fc.measure = measure;
  }
  return s;
}

// The executions of each function's own lines in one run: Σ of the exact counts of the lines
// of its file between its definition and its last line (gcov's range), by function index.
std::vector<uint64_t> OwnLineExecutions(const model::Profile& p) {
  std::map<uint32_t, std::map<uint32_t, uint64_t>> by_file;  // file → line → executions
  for (const model::Line& l : p.lines)
    if (l.count_exact && l.file.valid()) by_file[l.file.index()][l.line] += l.count;
  std::vector<uint64_t> out(p.functions.size(), 0);
  for (size_t i = 0; i < p.functions.size(); ++i) {
    const model::Function& f = p.functions[i];
    if (!f.end_line || !f.file.valid()) continue;
    auto file = by_file.find(f.file.index());
    if (file == by_file.end()) continue;
    for (auto it = file->second.lower_bound(f.line);
         it != file->second.end() && it->first <= f.end_line; ++it)
      out[i] += it->second;
  }
  return out;
}

// Per run, from the runs with exact line counts: the lines series of the functions whose own
// lines reach `min_percent` of some run's executed lines (0 in a run that lacks them).
void AddLineSeries(const std::vector<const model::Profile*>& runs, double min_percent,
                   std::map<std::string, CostSeries>& lines) {
  std::vector<std::vector<uint64_t>> executions;
  std::map<std::string, bool> chosen;
  for (const model::Profile* p : runs) {
    executions.push_back(p->summary.exact_line_counts ? OwnLineExecutions(*p)
                                                      : std::vector<uint64_t>{});
    uint64_t total = 0;
    for (const model::Line& l : p->lines)
      if (l.count_exact) total += l.count;
    for (size_t i = 0; i < executions.back().size(); ++i) {
      uint64_t own = executions.back()[i];
      if (own > 0 && 100.0 * double(own) / double(total) >= min_percent)
        chosen[model::FunctionKey(*p, p->functions[i])] = true;
    }
  }
  for (size_t r = 0; r < runs.size(); ++r) {
    const model::Profile& p = *runs[r];
    if (!p.summary.exact_line_counts) continue;  // no point: the series stays short of runs
    std::map<std::string, bool> seen;
    for (size_t i = 0; i < p.functions.size(); ++i) {
      const model::Function& f = p.functions[i];
      std::string key = model::FunctionKey(p, f);
      if (!chosen.count(key) || seen[key] || !f.end_line) continue;
      seen[key] = true;
      CostSeries& s = SeriesOf(lines, key, p, f, FunctionComplexity::Source::kRuns,
                               FunctionComplexity::Measure::kLines);
      s.fc.points.push_back(SizePoint{*p.summary.run_size, double(executions[r][i])});
      s.largest = std::max(s.largest, double(executions[r][i]));
    }
    for (const auto& [key, yes] : chosen)
      if (!seen.count(key) && lines.count(key))
        lines[key].fc.points.push_back(SizePoint{*p.summary.run_size, 0});
  }
}

}  // namespace

std::vector<FunctionComplexity> FitProfiles(const std::vector<const model::Profile*>& profiles,
                                            double min_percent, const ComplexityOptions& options) {
  using Source = FunctionComplexity::Source;
  using Measure = FunctionComplexity::Measure;
  std::map<std::string, CostSeries> calls, times, counts, lines;  // by function key
  // Per call.
  for (const model::Profile* p : profiles)
    for (const model::SizedCall& c : p->sized_calls) {
      const model::Function& f = p->function(c.function);
      CostSeries& s =
          SeriesOf(calls, model::FunctionKey(*p, f), *p, f, Source::kCalls, Measure::kTracedTime);
      s.fc.points.push_back(SizePoint{c.n, double(c.ns)});
      s.largest = std::max(s.largest, double(c.ns));
    }
  // Per run: which functions qualify, then a point from every run (0 where absent).
  std::vector<const model::Profile*> runs;
  for (const model::Profile* p : profiles)
    if (p->summary.run_size) runs.push_back(p);
  std::map<std::string, bool> chosen;
  for (const model::Profile* p : runs) {
    // A timed trace measures its functions exactly: the others' few samples per run say little.
    bool timed = p->summary.trace_timed;
    for (const model::Function& f : p->functions) {
      if (f.pseudo != model::PseudoKind::kNone || (timed && !f.timed)) continue;
      uint64_t ns = f.timed ? f.traced_inclusive_ns : f.inclusive_ns;
      uint64_t total = f.timed ? p->summary.traced_total_ns : p->summary.total_ns;
      if (ns > 0 && total > 0 && 100.0 * double(ns) / double(total) >= min_percent)
        chosen[model::FunctionKey(*p, f)] = true;
    }
  }
  for (const model::Profile* p : runs) {
    std::map<std::string, bool> seen;
    for (const model::Function& f : p->functions) {
      std::string key = model::FunctionKey(*p, f);
      if (!chosen.count(key) || seen[key]) continue;
      seen[key] = true;
      uint64_t ns = f.timed ? f.traced_inclusive_ns : f.inclusive_ns;
      CostSeries& t = SeriesOf(times, key, *p, f, Source::kRuns,
                               f.timed ? Measure::kTracedTime : Measure::kSampledTime);
      t.fc.points.push_back(SizePoint{*p->summary.run_size, double(ns)});
      t.largest = std::max(t.largest, double(ns));
      if (f.calls_exact) {
        CostSeries& c = SeriesOf(counts, key, *p, f, Source::kRuns, Measure::kCalls);
        c.fc.points.push_back(SizePoint{*p->summary.run_size, double(f.calls)});
      }
    }
    for (const auto& [key, yes] : chosen)
      if (!seen.count(key) && times.count(key))
        times[key].fc.points.push_back(SizePoint{*p->summary.run_size, 0});
  }
  AddLineSeries(runs, min_percent, lines);

  std::vector<CostSeries*> order;
  for (auto* in : {&calls, &times})
    for (auto& [key, s] : *in) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [](const CostSeries* a, const CostSeries* b) {
    return a->largest > b->largest;
  });
  std::vector<FunctionComplexity> out;
  // A run series of counts, when it changes with n and every run gave it.
  auto add_counted = [&](CostSeries& c, size_t runs_seen) {
    bool varies = false;
    for (const SizePoint& pt : c.fc.points) varies |= pt.ns != c.fc.points.front().ns;
    if (varies && c.fc.points.size() == runs_seen) {
      c.fc.result = FitComplexity(c.fc.points, options);
      out.push_back(std::move(c.fc));
    }
    c.fc.name.clear();
  };
  for (CostSeries* s : order) {
    s->fc.result = FitComplexity(s->fc.points, options);
    out.push_back(std::move(s->fc));
    if (out.back().source != Source::kRuns) continue;
    std::string name = out.back().name, definition = out.back().definition;
    for (auto* in : {&counts, &lines})
      for (auto& [k, c] : *in)
        if (c.fc.name == name && c.fc.definition == definition) add_counted(c, runs.size());
  }
  std::vector<CostSeries*> rest;
  for (auto& [k, c] : lines)
    if (!c.fc.name.empty()) rest.push_back(&c);
  std::stable_sort(rest.begin(), rest.end(), [](const CostSeries* a, const CostSeries* b) {
    return a->largest > b->largest;
  });
  for (CostSeries* c : rest) add_counted(*c, runs.size());
  return out;
}

}  // namespace hotline::analysis

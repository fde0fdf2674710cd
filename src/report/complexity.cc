// -X: how each function's cost grows with the input size (docs/complexity.md): the model the
// points support, or "undecided" with the candidates, and the numbers behind the verdict.
#include "report/complexity.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "report/names.h"
#include "report/text.h"

namespace hotline::report {
namespace {

using analysis::FitVerdict;
using analysis::FunctionComplexity;
using analysis::GrowthModel;

std::string ModelLabel(const analysis::ModelFit& fit) {
  if (fit.model == GrowthModel::kPower) return fmt::format("O(n^{:.2f})", fit.k);
  return analysis::GrowthModelName(fit.model);
}

std::string Candidates(const analysis::ComplexityResult& r) {
  std::string text;
  for (GrowthModel m : r.candidates) {
    if (!text.empty()) text += " | ";
    bool found = false;
    for (const analysis::ModelFit& f : r.fits)
      if (f.model == m && !found) text += ModelLabel(f), found = true;
    if (!found) text += analysis::GrowthModelName(m);
  }
  return text;
}

std::string Measured(const FunctionComplexity& fc) {
  using Measure = FunctionComplexity::Measure;
  const char* measure = fc.measure == Measure::kCalls        ? "calls"
                        : fc.measure == Measure::kLines      ? "lines"
                        : fc.measure == Measure::kTracedTime ? "time"
                                                             : "sampled";
  return fmt::format("{}/{}", measure,
                     fc.source == FunctionComplexity::Source::kCalls ? "call" : "run");
}

// A coefficient: a time for people (auto-scaled, or "~0" below a nanosecond), a count for
// calls and lines; -m gives the plain number.
std::string Coefficient(double v, bool counted, bool machine) {
  if (machine) return fmt::format("{:.6g}", v);
  if (counted) return v >= 1000 ? fmt::format("{:.0f}", v) : fmt::format("{:.4g}", v);
  if (v >= 1000) return FormatTime(static_cast<uint64_t>(std::llround(v)), false);
  return fmt::format("{:.3g}ns", v);
}

std::string Margin(double margin, bool machine) {
  if (std::isinf(margin)) return machine ? "inf" : ">999x";
  if (machine) return fmt::format("{:.4f}", margin);
  return margin > 999 ? ">999x" : fmt::format("{:.2f}x", margin);
}

std::string Name(const FunctionComplexity& fc, const ReportOptions& options) {
  std::string name = options.full_names || options.machine ? fc.name : ShortName(fc.name, false);
  if (options.definitions && !fc.definition.empty()) name += " [" + fc.definition + "]";
  return name;
}

}  // namespace

std::string ComplexityModelLabel(const analysis::ModelFit& fit) { return ModelLabel(fit); }

std::vector<std::string> ComplexityColumns() {
  return {"verdict", "model", "a",     "b",      "error",    "margin", "runner-up",
          "n from",  "n to",  "sizes", "points", "measured", "why",    "name"};
}

std::vector<std::string> ComplexityRow(const FunctionComplexity& fc, const ReportOptions& options) {
  const analysis::ComplexityResult& r = fc.result;
  bool machine = options.machine;
  bool counted = fc.counted();
  std::string n_from = fmt::format("{}", r.n_min), n_to = fmt::format("{}", r.n_max);
  std::string sizes = fmt::format("{}", r.sizes), points = fmt::format("{}", r.points);
  if (r.verdict == FitVerdict::kTooFewSizes)
    return {"too few", "",   "",    "",     "",           "",       "",
            n_from,    n_to, sizes, points, Measured(fc), r.reason, Name(fc, options)};
  const analysis::ModelFit& best = r.fits[r.best];
  bool decided = r.verdict == FitVerdict::kDecided;
  std::string runner_up = r.runner_up == r.best ? "" : ModelLabel(r.fits[r.runner_up]);
  std::string error =
      machine ? fmt::format("{:.6f}", best.cv_error) : fmt::format("{:.1f}%", 100 * best.cv_error);
  return {
      decided ? "decided" : "undecided",
      decided ? ModelLabel(best) : Candidates(r),
      decided ? Coefficient(best.a, counted, machine) : "",
      decided && best.model != GrowthModel::kConstant ? Coefficient(best.b, counted, machine) : "",
      error,
      Margin(r.margin, machine),
      runner_up,
      n_from,
      n_to,
      sizes,
      points,
      Measured(fc),
      decided ? "" : r.reason,
      Name(fc, options)};
}

void PrintComplexity(const std::vector<FunctionComplexity>& functions, const ReportOptions& options,
                     std::string& out) {
  TableWriter w(options, out);
  w.title("complexity",
          "Complexity: time (or calls, or lines run) against input size n, per function; a model "
          "is decided "
          "when it predicts every size left out clearly better than its rivals");
  auto cells = [](const std::vector<std::string>& text) {
    return std::vector<std::string_view>(text.begin(), text.end());
  };
  std::vector<std::string> columns = ComplexityColumns();
  w.header(cells(columns));
  for (const FunctionComplexity& fc : functions) {
    std::vector<std::string> row = ComplexityRow(fc, options);
    w.row(cells(row));
  }
  if (!options.machine) {
    w.flush();
    out +=
        "model: cost(n) = a + b*g(n); error: the model's RMS error predicting each size from the "
        "others, relative to the cost predicted; margin: the runner-up's error / the model's\n";
  }
}

void PrintComplexityPoints(const std::vector<FunctionComplexity>& functions,
                           const ReportOptions& options, std::string& out) {
  TableWriter w(options, out);
  w.title("complexity-points",
          "Complexity points: the median time (or calls, or lines run) at each size");
  w.header({"n", "median", "points", "measured", "name"});
  for (const FunctionComplexity& fc : functions) {
    std::map<uint64_t, std::vector<double>> by_n;
    for (const analysis::SizePoint& p : fc.points) by_n[p.n].push_back(p.ns);
    bool counted = fc.counted();
    for (auto& [n, values] : by_n) {
      std::sort(values.begin(), values.end());
      size_t m = values.size() / 2;
      double median = values.size() % 2 ? values[m] : (values[m - 1] + values[m]) / 2;
      w.row({fmt::format("{}", n), Coefficient(median, counted, options.machine),
             fmt::format("{}", values.size()), Measured(fc), Name(fc, options)});
    }
  }
}

}  // namespace hotline::report

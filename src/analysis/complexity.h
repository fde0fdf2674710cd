// How a cost grows with the input size: fits O(1), O(log n), O(n), O(n log n), O(n²), O(n³),
// O(2ⁿ) and a power n^k to points (n, time) and says which model the data support, or that they
// cannot tell (docs/complexity.md).
//
// Honest selection: every model is judged by the same yardstick, its leave-one-size-out
// prediction error in the original time units (relative to the measured time, so that a point
// at n = 10³ counts as much as one at n = 10⁶), never by R² in a transformed space. A model is
// only "decided" when it predicts clearly better than every model that is not a special case of
// it, over at least a decade of n, with an error small enough to mean something; otherwise the
// result is "undecided" and lists the candidates. Pure: no I/O, deterministic.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "model/profile.h"

namespace hotline::analysis {

enum class GrowthModel {
  kConstant,
  kLog,
  kLinear,
  kNLogN,
  kQuadratic,
  kCubic,
  kExponential,
  kPower
};

// "O(1)", "O(log n)", ..., "O(2^n)", and for the power "O(n^k)".
std::string GrowthModelName(GrowthModel model);

// One measurement: a call (or a run) of size n that took `ns`.
struct SizePoint {
  uint64_t n = 0;
  double ns = 0;
};

// A fitted model: time(n) = a + b·g(n), g being 1 (O(1): time = a), log₂ n, n, n·log₂ n, n², n³,
// 2ⁿ or n^k. a and b are never negative (a cost is not).
struct ModelFit {
  GrowthModel model = GrowthModel::kConstant;
  bool valid = false;      // could be fitted (2ⁿ only for n ≤ 1000)
  bool collapsed = false;  // the best b was 0: the fit is the constant one, not a rival of its own
  double a = 0, b = 0;
  double k = 0;         // the power's exponent (kPower only)
  double cv_error = 0;  // leave-one-size-out RMS prediction error, relative to the measured time
  double rms_ns = 0;    // RMS residual of the fit on all sizes, in ns
  double predict(double n) const;
};

enum class FitVerdict {
  kDecided,     // `best` is supported, by `margin` over the runner-up
  kUndecided,   // the data cannot tell `candidates` apart; `reason` says why
  kTooFewSizes  // fewer distinct sizes than ComplexityOptions::min_sizes: nothing fitted
};

struct ComplexityOptions {
  uint32_t min_sizes = 5;     // distinct values of n needed to fit at all
  double min_margin = 1.5;    // runner-up's error / best's error needed to decide
  double power_margin = 3;    // the power n^k must predict this much better than the fixed models
  double named_error = 0.10;  // ... and no fixed model may predict within this
  double resolution = 0.02;   // errors below this count as this: no timing repeats better
  double max_error = 0.25;    // best model's error above this: too much noise to decide
  double min_span = 10;       // max/min of n (of 2ⁿ for O(2ⁿ)) needed to decide
  double constant_error = 0.10;  // O(1) is decided only when it predicts within this
};

struct ComplexityResult {
  FitVerdict verdict = FitVerdict::kTooFewSizes;
  std::string reason;          // kUndecided: "too much noise", "less than a decade of n", ...
  std::vector<ModelFit> fits;  // valid, not collapsed ones, best first (by cv_error)
  size_t best = 0;             // index into fits: the chosen (or most likely) model
  size_t runner_up = 0;        // index into fits: the closest rival (== best when none)
  // The runner-up's error / the best's, each at least ComplexityOptions::resolution.
  double margin = 0;
  std::vector<GrowthModel> candidates;  // kUndecided: the models the data cannot tell apart
  uint64_t n_min = 0, n_max = 0;
  size_t points = 0, sizes = 0;  // measurements, and distinct values of n among them
  double power_k = 0;            // the fitted power's exponent, a cross-check (0 when unfitted)
};

// Fits every model to `points` (several points of one n are summarised by their median) and
// selects as the header says.
ComplexityResult FitComplexity(std::span<const SizePoint> points,
                               const ComplexityOptions& options = {});

// The points of one function and their fit.
struct FunctionComplexity {
  std::string name;        // the function's (full) name
  std::string definition;  // "file:line" of its definition, empty when unknown
  // Where the points come from: each call that hotline_size() tagged (its exact elapsed time),
  // or each run of a sweep (the function's inclusive time in that run).
  enum class Source { kCalls, kRuns } source = Source::kCalls;
  // What was measured per point: time in ns (traced: exact elapsed; else sampled, per the
  // profile's clock), the exact calls of a traced function per run, or the executions of the
  // function's own lines per run (gcov's counts, --coverage builds): counts no busy machine
  // blurs.
  enum class Measure { kTracedTime, kSampledTime, kCalls, kLines } measure = Measure::kTracedTime;
  bool counted() const { return measure == Measure::kCalls || measure == Measure::kLines; }
  std::vector<SizePoint> points;
  ComplexityResult result;
};

// Every function's points in `profiles`, fitted:
//  - per call: the SizedCall of every profile (hotline_size), by function;
//  - per run: each profile with a run size (Summary::run_size, `hotline sweep`) gives one point
//    per function: its inclusive time in that run (0 when the function did not appear), and, when
//    the function's calls are exact and differ between runs, its calls as a second series;
//  - per run, from runs with exact line counts: the executions of each function's own lines
//    (those gcov places between its first and last line), for the functions whose lines reach
//    `min_percent` of some run's executed lines and whose lines differ between runs.
//    Runs list only real functions whose time reaches `min_percent` of some run's total.
// Functions are matched across profiles by name and definition (model::FunctionKey). The result
// is ordered by the largest time measured, calls and lines right after their function's time;
// the lines of functions without a time row come last.
std::vector<FunctionComplexity> FitProfiles(const std::vector<const model::Profile*>& profiles,
                                            double min_percent,
                                            const ComplexityOptions& options = {});

}  // namespace hotline::analysis

// -X (`hotline report -X`, `hotline complexity`): the complexity table, one row per function and
// measure, from analysis::FitProfiles. docs/complexity.md describes every column.
#pragma once

#include <string>
#include <vector>

#include "analysis/complexity.h"
#include "report/report.h"

namespace hotline::report {

// The table's columns, and one function's row of them as PrintComplexity prints it (the HTML
// report shows the same cells beside each plot).
std::vector<std::string> ComplexityColumns();
std::vector<std::string> ComplexityRow(const analysis::FunctionComplexity& fc,
                                       const ReportOptions& options);
// A fitted model's name; a power with its exponent, "O(n^1.52)".
std::string ComplexityModelLabel(const analysis::ModelFit& fit);

void PrintComplexity(const std::vector<analysis::FunctionComplexity>& functions,
                     const ReportOptions& options, std::string& out);
// --points: every function's points, the median at each size (what the fits saw, before
// binning).
void PrintComplexityPoints(const std::vector<analysis::FunctionComplexity>& functions,
                           const ReportOptions& options, std::string& out);

}  // namespace hotline::report

// -X (`hotline report -X`, `hotline complexity`): the complexity table, one row per function and
// measure, from analysis::FitProfiles. docs/complexity.md describes every column.
#pragma once

#include <string>
#include <vector>

#include "analysis/complexity.h"
#include "report/report.h"

namespace hotline::report {

void PrintComplexity(const std::vector<analysis::FunctionComplexity>& functions,
                     const ReportOptions& options, std::string& out);
// --points: every function's points, the median at each size (what the fits saw, before
// binning).
void PrintComplexityPoints(const std::vector<analysis::FunctionComplexity>& functions,
                           const ReportOptions& options, std::string& out);

}  // namespace hotline::report

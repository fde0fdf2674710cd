// The comparison of two sets of runs (`hotline diff`), as tables: per function (self, then
// inclusive) and per line, the time before and after, the change, its interval, the shares and
// the verdict, largest changes first. docs/diff.md.
#pragma once

#include <string>

#include "analysis/diff.h"
#include "analysis/instruction_diff.h"
#include "report/report.h"

namespace hotline::report {

void PrintDiff(const analysis::Diff& diff, const ReportOptions& options, std::string& out);

// Two counts-only profiles: the instructions each function and line executed, before and after.
// Exact counts have no noise, so there are no intervals or verdicts: every row is a change.
void PrintInstructionDiff(const analysis::InstructionDiff& diff, const ReportOptions& options,
                          std::string& out);

}  // namespace hotline::report

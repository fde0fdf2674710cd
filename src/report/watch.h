// The watched-variables report (`hotline report -W`): what model::WatchProfile holds, as tables.
#pragma once

#include <string>

#include "model/watch.h"
#include "report/report.h"

namespace hotline::report {

// Per variable: writes (exact), reads (when counted), min and max as its type reads them,
// distinct values, the kernel's count and hits lost; then the most frequent values and the
// writing lines of each. -m: the same tables, TAB-separated, each after a "# NAME" line
// (watch, watch_values, watch_lines), with "-" for reads that were not counted.
void PrintWatches(const model::WatchProfile& watches, const ReportOptions& options,
                  std::string& out);

}  // namespace hotline::report

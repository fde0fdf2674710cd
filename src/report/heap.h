// The heap report (`hotline report -H`): what model::HeapProfile holds, as tables.
#pragma once

#include <string>

#include "model/heap.h"
#include "report/report.h"

namespace hotline::report {

// Summary (peak, totals, temporary, leaks, mmap), the top allocation sites by bytes, by calls and
// by peak contribution, the leaks with their stacks, and a size histogram. With -m only the
// summary, as `key<TAB>value` rows: peak_bytes, total_bytes, alloc_calls, free_calls,
// temporary_calls, leaked_bytes, leaked_calls.
void PrintHeap(const model::HeapProfile& heap, const ReportOptions& options, std::string& out);

}  // namespace hotline::report

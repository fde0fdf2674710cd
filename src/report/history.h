// `hotline history log` and `hotline check` as text: the history of a workload per commit with
// its sparklines, and a check's verdicts (also as Markdown, for a pull-request comment).
#pragma once

#include <string>
#include <vector>

#include "history/check.h"
#include "history/series.h"
#include "report/report.h"

namespace hotline::report {

struct HistoryLog {
  std::string database, workload;
  std::vector<history::CommitRuns> commits;  // oldest first
  std::vector<std::string> subjects;         // one per commit (may be empty strings)
  // The total first, then the function's self and inclusive time when one was asked for. The
  // last series' steps mark the commits where a change started.
  std::vector<history::Series> series;
  size_t max_commits = 20;  // the newest ones shown as rows; the sparklines span them all
};

void PrintHistoryLog(const HistoryLog& log, const ReportOptions& options, std::string& out);

struct CheckReport {
  std::string workload;
  std::string commit, baseline;  // full hashes
  bool baseline_named = false;   // --baseline, rather than the nearest ancestor with runs
  history::CheckResult result;
};

enum class CheckFormat { kText, kMarkdown };

void PrintCheck(const CheckReport& check, CheckFormat format, const ReportOptions& options,
                std::string& out);

}  // namespace hotline::report

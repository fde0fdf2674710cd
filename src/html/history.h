// `hotline html --history`: the run database's history of one workload as a static page, each
// series (the total, then the costliest functions) plotted per commit, oldest commit first, with
// the spread of its runs and the commit where a change started. The numbers come from the history
// database (src/history); the page only lays them out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace hotline::html {

struct HistoryCommit {
  std::string commit;   // the full hash
  std::string subject;  // the first line of its message, when the repository is at hand
  std::string branch;   // as recorded with its newest run; empty when detached
  int64_t time_unix = 0;  // when its newest run was added (seconds since 1970)
  bool dirty = false;     // some run was recorded from a tree with uncommitted changes
};

// One series' values at one commit: the mean over the commit's runs and their range.
struct HistoryValue {
  uint32_t runs = 0;
  double mean_ns = 0, min_ns = 0, max_ns = 0;
};

struct HistorySeries {
  std::string name;  // "total", or a function's name
  std::string file;  // the function's definition file; empty for the total
  bool self = true;  // self time; else inclusive
  // One per HistoryInput::commits; none where the commit has no runs of this function.
  std::vector<std::optional<HistoryValue>> values;
  // The commit (an index into commits) from which the series changed, surely beyond the
  // threshold, and by how much (new/old − 1); none when it never did.
  std::optional<size_t> change_at;
  double change = 0;
};

struct HistoryInput {
  std::string database;  // shown in the page's header: a path, or a PostgreSQL URL sans password
  std::string workload;
  std::vector<HistoryCommit> commits;  // oldest first
  std::vector<HistorySeries> series;   // the total first
};

// Writes the page into `dir` with the same rules as WriteHtmlReport: built beside `dir`, renamed
// into place when complete, an earlier report replaced, any other non-empty `dir` refused.
Status WriteHistoryReport(const HistoryInput& input, const std::string& dir);

}  // namespace hotline::html

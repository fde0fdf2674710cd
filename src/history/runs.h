// Runs in the history database: what `history add` stores of a profile, and what `history log`
// and `check` read back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/run_summary.h"
#include "base/status.h"
#include "history/database.h"

namespace hotline::history {

struct HeapTotals {
  uint64_t peak_bytes = 0, total_bytes = 0, allocations = 0;
};

struct Machine {
  std::string hostname, cpu_model, kernel;
};

// This machine: its host name, CPU model (/proc/cpuinfo) and kernel (uname).
Machine ThisMachine();

struct RunRecord {
  int64_t id = 0;          // given by the database
  int64_t added_at = 0;    // Unix seconds
  int64_t started_at = 0;  // Unix ns; 0 when unknown
  std::string commit;      // full hash
  std::string branch;      // empty when detached
  bool dirty = false;
  std::string workload;
  std::string program;    // the executable's path
  std::string arguments;  // its arguments, space-separated
  std::string profile;    // the file it was added from
  Machine machine;
  std::optional<HeapTotals> heap;  // runs recorded with --heap
  analysis::RunSummary summary;    // functions and lines only when asked for
};

// Stores `run` (its summary's functions and lines with it) in one transaction; its new id.
Expected<int64_t> AddRun(Database& db, const RunRecord& run);

struct RunFilter {
  std::string workload;
  std::optional<std::string> commit;    // only this commit's runs
  bool functions = true;                // load each run's functions
  std::optional<std::string> function;  // ... only those of this name
  bool lines = false;                   // and lines
};

// The runs that pass `filter`, oldest first.
Expected<std::vector<RunRecord>> FindRuns(Database& db, const RunFilter& filter);

struct WorkloadInfo {
  std::string name;
  int64_t runs = 0, commits = 0;
};
Expected<std::vector<WorkloadInfo>> Workloads(Database& db);

// The names of functions of `workload`'s runs that contain `text` (exactly `text` alone, when
// one is), at most `limit`.
Expected<std::vector<std::string>> FunctionsNamed(Database& db, const std::string& workload,
                                                  const std::string& text, size_t limit);

}  // namespace hotline::history

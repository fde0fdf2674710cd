#include "history/runs.h"

#include <fmt/core.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <map>

namespace hotline::history {
namespace {

// Rows per INSERT: few round trips to a server, and far below both engines' parameter limits.
constexpr size_t kRowsPerInsert = 400;

// Inserts `rows` (each `columns` values) into `table` (`names` its columns), many per statement.
Status InsertRows(Database& db, const std::string& table, const std::string& names, size_t columns,
                  const std::vector<Value>& values) {
  size_t rows = values.size() / columns;
  for (size_t first = 0; first < rows; first += kRowsPerInsert) {
    size_t count = std::min(kRowsPerInsert, rows - first);
    std::string sql = fmt::format("INSERT INTO {} ({}) VALUES ", table, names);
    for (size_t r = 0; r < count; ++r) {
      sql += r ? ",(" : "(";
      for (size_t c = 0; c < columns; ++c)
        sql += fmt::format("{}${}", c ? "," : "", r * columns + c + 1);
      sql += ')';
    }
    std::span<const Value> params(values.data() + first * columns, count * columns);
    if (Status s = db.Run(sql, params); !s.ok()) return s;
  }
  return Status();
}

int64_t Signed(uint64_t n) { return static_cast<int64_t>(n); }

Status StoreRun(Database& db, const RunRecord& run, int64_t* id) {
  const analysis::RunSummary& s = run.summary;
  std::vector<Value> params = {
      run.added_at,
      run.started_at,
      run.commit,
      run.branch,
      int64_t{run.dirty},
      run.workload,
      run.program,
      run.arguments,
      run.profile,
      run.machine.hostname,
      run.machine.cpu_model,
      run.machine.kernel,
      std::string(s.clock == format::ClockMode::kWall ? "wall" : "cpu"),
      Signed(s.total_ns),
      Signed(s.samples),
      Signed(s.period_ns),
      run.heap ? Value(Signed(run.heap->peak_bytes)) : Value(nullptr),
      run.heap ? Value(Signed(run.heap->total_bytes)) : Value(nullptr),
      run.heap ? Value(Signed(run.heap->allocations)) : Value(nullptr),
  };
  std::vector<Row> rows;
  if (Status st = db.Run(
          "INSERT INTO runs (added_at, started_at, commit_id, branch, dirty, workload, program, "
          "arguments, profile, hostname, cpu_model, kernel, clock, total_ns, samples, period_ns, "
          "heap_peak_bytes, heap_total_bytes, heap_allocations) VALUES ($1, $2, $3, $4, $5, $6, "
          "$7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19) RETURNING id",
          params, &rows);
      !st.ok())
    return st;
  if (rows.size() != 1) return Status::Error(fmt::format("{}: no id for the new run", db.name()));
  *id = Integer(rows[0][0]);
  std::vector<Value> functions;
  for (const analysis::FunctionCost& f : s.functions)
    functions.insert(functions.end(),
                     {*id, f.name, f.file, int64_t{f.line}, f.module, Signed(f.self_ns),
                      Signed(f.inclusive_ns), Signed(f.calls), Signed(f.samples)});
  if (Status st = InsertRows(db, "functions",
                             "run_id, name, file, line, module, self_ns, inclusive_ns, calls, "
                             "samples",
                             9, functions);
      !st.ok())
    return st;
  std::vector<Value> lines;
  for (const analysis::LineCost& l : s.lines)
    lines.insert(lines.end(), {*id, l.file, int64_t{l.line}, Signed(l.self_ns),
                               Signed(l.inclusive_ns), Signed(l.count), Signed(l.samples)});
  return InsertRows(db, "lines", "run_id, file, line, self_ns, inclusive_ns, count, samples", 7,
                    lines);
}

// "WHERE workload = $1 [AND commit_id = $2]" and its parameters.
std::string RunCondition(const RunFilter& filter, std::vector<Value>& params) {
  params.push_back(filter.workload);
  std::string where = "workload = $1";
  if (filter.commit) {
    params.push_back(*filter.commit);
    where += " AND commit_id = $2";
  }
  return where;
}

uint64_t Unsigned(const std::optional<std::string>& text) {
  return static_cast<uint64_t>(Integer(text));
}

}  // namespace

Machine ThisMachine() {
  Machine m;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) m.hostname = host;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.starts_with("model name")) {
      if (size_t colon = line.find(": "); colon != std::string::npos)
        m.cpu_model = line.substr(colon + 2);
      break;
    }
  struct utsname u;
  if (uname(&u) == 0) m.kernel = fmt::format("{} {} {}", u.sysname, u.release, u.machine);
  return m;
}

Expected<int64_t> AddRun(Database& db, const RunRecord& run) {
  if (Status s = db.BeginWrite(); !s.ok()) return s;
  int64_t id = 0;
  if (Status s = StoreRun(db, run, &id); !s.ok()) {
    db.Rollback();
    return s;
  }
  if (Status s = db.Commit(); !s.ok()) return s;
  return id;
}

Expected<std::vector<RunRecord>> FindRuns(Database& db, const RunFilter& filter) {
  std::vector<Value> params;
  std::string where = RunCondition(filter, params);
  std::vector<Row> rows;
  if (Status s = db.Run(
          "SELECT id, added_at, started_at, commit_id, branch, dirty, workload, program, "
          "arguments, profile, hostname, cpu_model, kernel, clock, total_ns, samples, period_ns, "
          "heap_peak_bytes, heap_total_bytes, heap_allocations FROM runs WHERE " +
              where + " ORDER BY id",
          params, &rows);
      !s.ok())
    return s;
  std::vector<RunRecord> runs;
  std::map<int64_t, size_t> index;
  for (const Row& r : rows) {
    RunRecord run;
    run.id = Integer(r[0]);
    run.added_at = Integer(r[1]);
    run.started_at = Integer(r[2]);
    run.commit = r[3].value_or("");
    run.branch = r[4].value_or("");
    run.dirty = Integer(r[5]) != 0;
    run.workload = r[6].value_or("");
    run.program = r[7].value_or("");
    run.arguments = r[8].value_or("");
    run.profile = r[9].value_or("");
    run.machine = {r[10].value_or(""), r[11].value_or(""), r[12].value_or("")};
    run.summary.clock = r[13] == "wall" ? format::ClockMode::kWall : format::ClockMode::kCpu;
    run.summary.total_ns = Unsigned(r[14]);
    run.summary.samples = Unsigned(r[15]);
    run.summary.period_ns = Unsigned(r[16]);
    if (r[17]) run.heap = HeapTotals{Unsigned(r[17]), Unsigned(r[18]), Unsigned(r[19])};
    index[run.id] = runs.size();
    runs.push_back(std::move(run));
  }
  if (runs.empty()) return runs;
  if (filter.functions) {
    std::vector<Value> fparams;
    std::string sql =
        "SELECT run_id, name, file, line, module, self_ns, inclusive_ns, calls, samples FROM "
        "functions WHERE run_id IN (SELECT id FROM runs WHERE " +
        RunCondition(filter, fparams) + ")";
    if (filter.function) {
      fparams.push_back(*filter.function);
      sql += fmt::format(" AND name = ${}", fparams.size());
    }
    std::vector<Row> frows;
    if (Status s = db.Run(sql, fparams, &frows); !s.ok()) return s;
    for (const Row& r : frows) {
      auto at = index.find(Integer(r[0]));
      if (at == index.end()) continue;  // added since the runs were read
      analysis::FunctionCost f;
      f.name = r[1].value_or("");
      f.file = r[2].value_or("");
      f.line = static_cast<uint32_t>(Integer(r[3]));
      f.module = r[4].value_or("");
      f.self_ns = Unsigned(r[5]);
      f.inclusive_ns = Unsigned(r[6]);
      f.calls = Unsigned(r[7]);
      f.samples = Unsigned(r[8]);
      runs[at->second].summary.functions.push_back(std::move(f));
    }
  }
  if (filter.lines) {
    std::vector<Value> lparams;
    std::vector<Row> lrows;
    if (Status s = db.Run(
            "SELECT run_id, file, line, self_ns, inclusive_ns, count, samples FROM lines WHERE "
            "run_id IN (SELECT id FROM runs WHERE " +
                RunCondition(filter, lparams) + ")",
            lparams, &lrows);
        !s.ok())
      return s;
    for (const Row& r : lrows) {
      auto at = index.find(Integer(r[0]));
      if (at == index.end()) continue;
      runs[at->second].summary.lines.push_back(
          {r[1].value_or(""), static_cast<uint32_t>(Integer(r[2])), Unsigned(r[3]), Unsigned(r[4]),
           Unsigned(r[5]), Unsigned(r[6])});
    }
  }
  return runs;
}

Expected<std::vector<WorkloadInfo>> Workloads(Database& db) {
  std::vector<Row> rows;
  if (Status s = db.Run("SELECT workload, COUNT(*), COUNT(DISTINCT commit_id) FROM runs "
                        "GROUP BY workload ORDER BY workload",
                        {}, &rows);
      !s.ok())
    return s;
  std::vector<WorkloadInfo> workloads;
  for (const Row& r : rows) workloads.push_back({r[0].value_or(""), Integer(r[1]), Integer(r[2])});
  return workloads;
}

Expected<std::vector<std::string>> FunctionsNamed(Database& db, const std::string& workload,
                                                  const std::string& text, size_t limit) {
  std::vector<Value> params = {workload, text};
  std::vector<Row> rows;
  if (Status s = db.Run("SELECT DISTINCT f.name FROM functions f JOIN runs r ON r.id = f.run_id "
                        "WHERE r.workload = $1 AND f.name = $2",
                        params, &rows);
      !s.ok())
    return s;
  if (!rows.empty()) return std::vector<std::string>{text};
  // Plain text, not a pattern: LIKE's own wildcards in the name are escaped.
  std::string pattern = "%";
  for (char c : text) {
    if (c == '%' || c == '_' || c == '\\') pattern += '\\';
    pattern += c;
  }
  pattern += '%';
  params = {workload, pattern, static_cast<int64_t>(limit)};
  if (Status s = db.Run("SELECT DISTINCT f.name FROM functions f JOIN runs r ON r.id = f.run_id "
                        "WHERE r.workload = $1 AND f.name LIKE $2 ESCAPE '\\' ORDER BY f.name "
                        "LIMIT $3",
                        params, &rows);
      !s.ok())
    return s;
  std::vector<std::string> names;
  for (const Row& r : rows) names.push_back(r[0].value_or(""));
  return names;
}

}  // namespace hotline::history

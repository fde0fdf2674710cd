// The run database end to end, on SQLite and on a PostgreSQL server the test starts itself:
// regression.c's two builds in a git repository of the test's own (slow_path twice as slow from the
// second commit on, the third commit unchanged), five runs each. `history add` (commit found
// from the program's folder, or named), `history log`, `check` (exit codes, grades, Markdown,
// too few runs, samples a loaded machine lost not judged) and `git bisect run` with check;
// concurrent adds from two processes; a database of schema version 1 migrated; a database that
// is not hotline's, or newer, refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"
#include "history/database.h"
#include "history/runs.h"
#include "history/schema.h"
#include "model/profile.h"
#include "postgres_server.h"
#include "sample_profile.h"

namespace hotline {
namespace {

namespace fs = std::filesystem;
using testing::Execute;
using testing::Hotline;
using testing::RunResult;
using testing::ScratchDir;

RunResult Git(const std::string& repo, std::vector<std::string> args) {
  args.insert(args.begin(),
              {"/usr/bin/git", "-c", "user.name=hotline", "-c", "user.email=t@hotline"});
  RunResult r = Execute(args, repo);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
  return r;
}

std::vector<std::vector<std::string>> Rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, '\t');) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

constexpr int kCommits = 3, kRuns = 5;

// Each commit's file BUILD names its build (build/0 is regression_a, build/1 and build/2 are
// regression_c: slow_path does twice the work); the builds sit in the repository, ignored, as a
// build folder does, so that `history add` finds the repository from the program's folder.
struct Repository {
  std::string dir;
  std::string commits[kCommits];            // oldest first
  std::vector<std::string> runs[kCommits];  // each commit's profiles
  std::string Program(int c) const { return dir + "/build/" + std::to_string(c) + "/regression"; }
};

// Each commit's runs, written once for every test as profiles of known counts (slow_path's 3000
// samples at c0, a quarter of the run, 6000 from c1 on; every other_N's 300 moved by up to 3%,
// run by run): check's
// and log's verdicts are arithmetic on them, which a busy machine's drift cannot change.
const Repository& TheRepository() {
  static const Repository repo = [] {
    Repository r;
    r.dir = ScratchDir("history-repo");
    Git(r.dir, {"init", "-q", "-b", "main", "."});
    std::ofstream(r.dir + "/.gitignore") << "build/\n*.hotline\n.hotline/\n";
    const char* subjects[kCommits] = {"base", "slow_path does twice the work",
                                      "an unrelated change"};
    for (int c = 0; c < kCommits; ++c) {
      std::ofstream(r.dir + "/BUILD") << c << "\n";
      Git(r.dir, {"add", "BUILD", ".gitignore"});
      Git(r.dir, {"commit", "-q", "-m", subjects[c]});
      r.commits[c] = Git(r.dir, {"rev-parse", "HEAD"}).out;
      fs::create_directories(r.dir + "/build/" + std::to_string(c));
      fs::copy_file(c == 0 ? PROGRAM_regression_a : PROGRAM_regression_c, r.Program(c));
    }
    for (int run = 0; run < kRuns; ++run)
      for (int c = 0; c < kCommits; ++c) {
        std::string profile =
            r.dir + "/c" + std::to_string(c) + "-" + std::to_string(run) + ".hotline";
        EXPECT_TRUE(testing::WriteRegressionProfile(profile, c == 0 ? 3000 : 6000,
                                                    uint32_t(1 + run * kCommits + c),
                                                    r.Program(c)));
        r.runs[c].push_back(profile);
      }
    return r;
  }();
  return repo;
}

// Runs `hotline ARGS --db DB` in the repository.
RunResult WithDb(const std::string& db, std::vector<std::string> args) {
  args.insert(args.end(), {"--db", db});
  return Hotline(args, TheRepository().dir);
}

class History : public ::testing::TestWithParam<std::string> {
 protected:
  // A fresh, empty database of the engine under test.
  std::string NewDatabase() {
    static int count = 0;
    std::string name = "hotline_" + std::to_string(getpid()) + "_" + std::to_string(++count);
    if (GetParam() == "sqlite") return ScratchDir("history-db") + "/" + name + ".db";
    testing::PostgresServer& server = testing::PostgresServer::Shared();
    if (!server.unavailable().empty()) return "";
    return server.NewDatabase(name);
  }

  void SetUp() override {
    if (GetParam() == "postgresql" && !testing::PostgresServer::Shared().unavailable().empty())
      GTEST_SKIP() << "no PostgreSQL server: " << testing::PostgresServer::Shared().unavailable();
  }

  // Adds commit c's runs, naming the commit (the repository's HEAD is the newest commit).
  void AddRuns(const std::string& db, int c) {
    const Repository& repo = TheRepository();
    std::vector<std::string> args = {"history", "add", "--commit", repo.commits[c]};
    args.insert(args.end(), repo.runs[c].begin(), repo.runs[c].end());
    RunResult r = WithDb(db, args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
};

// `check -m`'s rows: grade and name, the total first.
std::vector<std::pair<std::string, std::string>> Grades(const RunResult& r) {
  std::vector<std::pair<std::string, std::string>> grades;
  for (const auto& row : Rows(r.out))
    if (row.size() == 7) grades.emplace_back(row[0], row[6]);
  return grades;
}

// The functions (and total) graded slower, much slower or faster.
std::vector<std::string> Flagged(const RunResult& r) {
  std::vector<std::string> names;
  for (const auto& [grade, name] : Grades(r))
    if (grade == "slower" || grade == "much slower" || grade == "faster")
      names.push_back(name + " " + grade.substr(grade.find(' ') + 1));
  return names;
}

TEST_P(History, AddLogAndCheckFindTheSlowdownAndNothingElse) {
  const Repository& repo = TheRepository();
  std::string db = NewDatabase();
  ASSERT_FALSE(db.empty());
  AddRuns(db, 0);
  AddRuns(db, 1);
  // The newest commit's runs without --commit: HEAD of the repository the program is in.
  std::vector<std::string> add = {"history", "add"};
  add.insert(add.end(), repo.runs[2].begin(), repo.runs[2].end());
  RunResult added = WithDb(db, add);
  ASSERT_EQ(added.exit_code, 0) << added.err;
  EXPECT_NE(added.out.find("commit " + repo.commits[2].substr(0, 8) + " (main)"), std::string::npos)
      << added.out;

  // The second commit against its parent: slow_path and nothing else. The total grows by a
  // quarter (slow_path is a quarter of it), but a busy machine's noise in whole-run times can
  // widen its interval below the threshold, so it is graded slower or maybe, never no change.
  RunResult slower = WithDb(db, {"check", "-m", "--rev", repo.commits[1]});
  EXPECT_EQ(slower.exit_code, 1) << slower.out << slower.err;
  std::vector<std::pair<std::string, std::string>> grades = Grades(slower);
  ASSERT_GE(grades.size(), 2u) << slower.out;
  EXPECT_EQ(grades[0].second, "[total]") << slower.out;
  EXPECT_TRUE(grades[0].first == "slower" || grades[0].first == "much slower" ||
              grades[0].first == "maybe")
      << slower.out;
  std::vector<std::string> flagged = Flagged(slower);
  std::erase_if(flagged, [](const std::string& f) { return f.starts_with("[total] "); });
  ASSERT_EQ(flagged.size(), 1u) << slower.out;
  EXPECT_TRUE(flagged[0] == "slow_path slower" || flagged[0] == "slow_path much slower")
      << flagged[0];
  // HEAD against its parent, the same build: nothing slower.
  RunResult same = WithDb(db, {"check", "-m"});
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_EQ(Flagged(same), std::vector<std::string>{}) << same.out;
  // HEAD against a named baseline before the slowdown.
  RunResult named = WithDb(db, {"check", "--baseline", repo.commits[0]});
  EXPECT_EQ(named.exit_code, 1) << named.out << named.err;
  EXPECT_NE(named.out.find("Verdict: slower"), std::string::npos) << named.out;
  RunResult markdown = WithDb(db, {"check", "--format", "markdown", "--rev", repo.commits[1]});
  EXPECT_EQ(markdown.exit_code, 1);
  EXPECT_NE(markdown.out.find("### hotline check"), std::string::npos) << markdown.out;
  EXPECT_NE(markdown.out.find("| `slow_path` |"), std::string::npos) << markdown.out;

  // The log marks the commit where slow_path's change started, and no other.
  RunResult log = WithDb(db, {"history", "log", "-m", "slow_path"});
  ASSERT_EQ(log.exit_code, 0) << log.err;
  std::vector<std::vector<std::string>> rows = Rows(log.out);
  ASSERT_EQ(rows.size(), 3u) << log.out;
  for (int row = 0; row < 3; ++row) {
    int c = 2 - row;  // newest first
    ASSERT_EQ(rows[row].size(), 8u) << log.out;
    EXPECT_EQ(rows[row][0], repo.commits[c]);
    EXPECT_EQ(rows[row][2], "5");
    if (c == 1)
      EXPECT_GT(std::stod(rows[row][6]), 0.1) << log.out;
    else
      EXPECT_EQ(rows[row][6], "") << log.out;
  }
  EXPECT_EQ(rows[0][7], "an unrelated change");
  RunResult human = WithDb(db, {"history", "log", "slow"});  // a part of the name names it
  EXPECT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("▲ +"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("slow_path self"), std::string::npos) << human.out;

  // The history page plots slow_path with its change marked at the second commit.
  std::string page = ScratchDir("history-page") + "/report";
  RunResult html = WithDb(db, {"html", "--history", "-o", page});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  std::ifstream in(page + "/data/data.js");
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t name = data.find("\"name\":\"slow_path\"");
  ASSERT_NE(name, std::string::npos) << data;
  std::string series = data.substr(data.rfind('{', name), name - data.rfind('{', name));
  EXPECT_NE(series.find("\"change_at\":1,"), std::string::npos) << series;
  EXPECT_EQ(std::count(data.begin(), data.end(), '\n'), 1);  // one script line, no markup
  EXPECT_NE(data.find(repo.commits[1]), std::string::npos);
}

// A loaded machine's kernel drops samples `hotline record` did not read in time; their CPU time
// is [unsampled]. Commit 2 gets commit 1's own runs again, one of them with half of every
// function's samples lost: check judges no function slower (that row alone once made a
// same-build commit "slower") and says how much time had no sample.
TEST_P(History, CheckDoesNotJudgeTimeNoSampleReached) {
  const Repository& repo = TheRepository();
  std::string url = NewDatabase();
  ASSERT_FALSE(url.empty());
  AddRuns(url, 1);
  {
    Expected<std::unique_ptr<history::Database>> db = history::Connect(url);
    ASSERT_TRUE(db.ok()) << db.status().message();
    history::RunFilter filter;
    filter.workload = "regression";
    filter.commit = repo.commits[1];
    Expected<std::vector<history::RunRecord>> runs = history::FindRuns(**db, filter);
    ASSERT_TRUE(runs.ok()) << runs.status().message();
    ASSERT_EQ(runs->size(), size_t(kRuns));
    for (size_t i = 0; i < runs->size(); ++i) {
      history::RunRecord run = (*runs)[i];
      run.commit = repo.commits[2];
      if (i == 0) {  // check judges self time: half of every function's goes to [unsampled]
        std::vector<analysis::FunctionCost>& functions = run.summary.functions;
        auto unsampled = [](const analysis::FunctionCost& f) {
          return f.name == model::kUnsampledName;
        };
        if (std::none_of(functions.begin(), functions.end(), unsampled)) {
          functions.emplace_back();
          functions.back().name = functions.back().file = functions.back().module =
              model::kUnsampledName;
        }
        uint64_t lost = 0;
        for (analysis::FunctionCost& f : functions)
          if (!unsampled(f)) lost += f.self_ns / 2, f.self_ns -= f.self_ns / 2;
        auto row = std::find_if(functions.begin(), functions.end(), unsampled);
        row->self_ns += lost;
        row->inclusive_ns += lost;
      }
      ASSERT_TRUE(history::AddRun(**db, run).ok());
    }
  }
  RunResult check = WithDb(url, {"check", "-m", "--rev", repo.commits[2]});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  for (const auto& [grade, name] : Grades(check))
    EXPECT_EQ(grade.find("slower"), std::string::npos) << check.out;
  RunResult text = WithDb(url, {"check", "--rev", repo.commits[2]});
  EXPECT_EQ(text.exit_code, 0) << text.out << text.err;
  EXPECT_NE(text.out.find("Not judged: [unsampled], "), std::string::npos) << text.out;
}

TEST_P(History, RefusesTooFewRunsAndCommitsThatDoNotExist) {
  const Repository& repo = TheRepository();
  std::string db = NewDatabase();
  ASSERT_FALSE(db.empty());
  AddRuns(db, 0);
  AddRuns(db, 1);
  RunResult few = WithDb(db, {"check", "--min-runs", "6", "--rev", repo.commits[1]});
  EXPECT_EQ(few.exit_code, 2);
  EXPECT_NE(few.err.find("has 5 runs of workload regression; a verdict needs at least 6"),
            std::string::npos)
      << few.err;
  RunResult none = WithDb(db, {"check"});  // HEAD has no runs of its own
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("has 0 runs"), std::string::npos) << none.err;
  RunResult commit =
      WithDb(db, {"history", "add", "--commit", "0123456789abcdef", repo.runs[0][0]});
  EXPECT_EQ(commit.exit_code, 1);
  EXPECT_NE(commit.err.find("no commit '0123456789abcdef'"), std::string::npos) << commit.err;
  RunResult baseline = WithDb(db, {"check", "--baseline", "no-such-branch"});
  EXPECT_EQ(baseline.exit_code, 2);
  EXPECT_NE(baseline.err.find("no commit 'no-such-branch'"), std::string::npos) << baseline.err;
  RunResult workload = WithDb(db, {"history", "log", "--workload", "other"});
  EXPECT_EQ(workload.exit_code, 1);
  EXPECT_NE(workload.err.find("no runs of workload 'other' (there are: regression)"),
            std::string::npos)
      << workload.err;
}

// Two processes adding ten runs each to a new database at once: the schema is made once and
// every run arrives whole.
TEST_P(History, ConcurrentAddsFromTwoProcesses) {
  const Repository& repo = TheRepository();
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::string db = NewDatabase();
    ASSERT_FALSE(db.empty());
    std::vector<std::string> add = {"history", "add", "--commit", repo.commits[0]};
    for (int twice = 0; twice < 2; ++twice)
      add.insert(add.end(), repo.runs[0].begin(), repo.runs[0].end());
    RunResult first, second;
    std::thread other([&] { second = WithDb(db, add); });
    first = WithDb(db, add);
    other.join();
    EXPECT_EQ(first.exit_code, 0) << first.err;
    EXPECT_EQ(second.exit_code, 0) << second.err;
    RunResult log = WithDb(db, {"history", "log", "-m", "--all"});
    ASSERT_EQ(log.exit_code, 0) << log.err;
    std::vector<std::vector<std::string>> rows = Rows(log.out);
    ASSERT_EQ(rows.size(), 1u) << log.out;
    EXPECT_EQ(rows[0][2], "20");
  }
}

// A database made by schema version 1 (runs and functions, no lines nor heap totals) is migrated
// when opened, its runs kept.
TEST_P(History, MigratesADatabaseOfSchemaVersionOne) {
  const Repository& repo = TheRepository();
  std::string url = NewDatabase();
  ASSERT_FALSE(url.empty());
  {
    Expected<std::unique_ptr<history::Database>> db = history::Connect(url);
    ASSERT_TRUE(db.ok()) << db.status().message();
    ASSERT_TRUE(history::PrepareSchema(**db, 1).ok());
    Expected<std::vector<std::string>> tables = (*db)->Tables();
    ASSERT_TRUE(tables.ok());
    EXPECT_EQ(std::count(tables->begin(), tables->end(), "lines"), 0);
    std::vector<history::Value> run = {repo.commits[0]};
    ASSERT_TRUE((*db)
                    ->Run("INSERT INTO runs (added_at, started_at, commit_id, branch, dirty, "
                          "workload, program, arguments, profile, hostname, cpu_model, kernel, "
                          "clock, total_ns, samples, period_ns) VALUES (1700000000, 0, $1, "
                          "'main', 0, 'regression', 'regression', '', 'old.hotline', 'h', "
                          "'c', 'k', 'cpu', 400000000, 4000, 100000)",
                          run)
                    .ok());
    ASSERT_TRUE((*db)
                    ->Run("INSERT INTO functions (run_id, name, file, line, module, self_ns, "
                          "inclusive_ns, calls, samples) SELECT id, 'slow_path', "
                          "'regression.c', 19, '', 100000000, 100000000, 1, 1000 FROM runs")
                    .ok());
  }
  AddRuns(url, 0);  // opens it: migrated
  RunResult log = WithDb(url, {"history", "log", "-m", "slow_path"});
  ASSERT_EQ(log.exit_code, 0) << log.err;
  std::vector<std::vector<std::string>> rows = Rows(log.out);
  ASSERT_EQ(rows.size(), 1u) << log.out;
  EXPECT_EQ(rows[0][2], "6");  // the old run and the five new ones
  Expected<std::unique_ptr<history::Database>> db = history::Connect(url);
  ASSERT_TRUE(db.ok());
  std::vector<history::Row> version;
  ASSERT_TRUE(
      (*db)->Run("SELECT value FROM hotline_meta WHERE key = 'schema_version'", {}, &version).ok());
  ASSERT_EQ(version.size(), 1u);
  EXPECT_EQ(version[0][0], std::to_string(history::kSchemaVersion));
  std::vector<history::Row> lines;
  ASSERT_TRUE((*db)->Run("SELECT COUNT(*) FROM lines", {}, &lines).ok());
  EXPECT_GT(history::Integer(lines[0][0]), 0);  // the new runs' lines
}

TEST_P(History, RefusesADatabaseThatIsNotHotlinesOrIsNewer) {
  const Repository& repo = TheRepository();
  std::string foreign = NewDatabase();
  ASSERT_FALSE(foreign.empty());
  {
    Expected<std::unique_ptr<history::Database>> db = history::Connect(foreign);
    ASSERT_TRUE(db.ok()) << db.status().message();
    ASSERT_TRUE((*db)->Run("CREATE TABLE customers (id INTEGER, name TEXT)").ok());
  }
  for (std::vector<std::string> args :
       {std::vector<std::string>{"history", "add", repo.runs[0][0]},
        std::vector<std::string>{"history", "log"}, std::vector<std::string>{"check"}}) {
    RunResult r = WithDb(foreign, args);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find("not a hotline history database (it holds customers)"), std::string::npos)
        << r.err;
  }
  std::string newer = NewDatabase();
  {
    Expected<std::unique_ptr<history::Database>> db = history::Connect(newer);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(history::PrepareSchema(**db).ok());
    ASSERT_TRUE(
        (*db)->Run("UPDATE hotline_meta SET value = '99' WHERE key = 'schema_version'").ok());
  }
  RunResult r = WithDb(newer, {"history", "add", repo.runs[0][0]});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("written by a newer hotline (schema version 99"), std::string::npos)
      << r.err;
  if (GetParam() == "sqlite") {
    std::string garbage = ScratchDir("history-garbage") + "/history.db";
    std::ofstream(garbage) << "this is not a database, it only has its name\n";
    RunResult g = WithDb(garbage, {"history", "log"});
    EXPECT_EQ(g.exit_code, 1);
    EXPECT_NE(g.err.find("not a hotline history database (not even an SQLite file)"),
              std::string::npos)
        << g.err;
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, History, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& info) { return info.param; });

// `git bisect run` finds the commit that made slow_path twice as slow, in a repository of its
// own: c0 and c1 build regression_a, c2 and c3 regression_c (SLOWDOWN=100). The script builds
// (here: picks the commit's build), records five runs, adds them and checks them against c0's
// runs, recorded before; an error (exit 2) is told to bisect as "skip this commit" (125). The
// script's runs cannot be interleaved with the baseline's as the other tests' are, so it asks
// what a bisection asks: is the known regression here? --threshold 25 and --min-share 5 (only
// the functions that hold 5% of the time, slow_path's quarter and more) keep the verdicts clear
// of the drift between two sessions of runs.
TEST(HistoryBisect, FindsTheCommitThatMadeSlowPathTwiceAsSlow) {
  std::string repo = ScratchDir("history-bisect");
  std::string db = repo + "/.hotline/history.db";
  Git(repo, {"init", "-q", "-b", "main", "."});
  std::ofstream(repo + "/.gitignore") << "build/\n*.hotline\n.hotline/\n";
  const char* builds[4] = {"a", "a", "c", "c"};
  std::string commits[4];
  for (int c = 0; c < 4; ++c) {
    std::ofstream(repo + "/BUILD") << builds[c] << "\n";
    std::ofstream(repo + "/NOTES") << "change " << c << "\n";
    Git(repo, {"add", "BUILD", "NOTES", ".gitignore"});
    Git(repo, {"commit", "-q", "-m", "change " + std::to_string(c)});
    commits[c] = Git(repo, {"rev-parse", "HEAD"}).out;
  }
  for (const char* build : {"a", "c"}) {
    fs::create_directories(repo + "/build/" + build);
    fs::copy_file(build[0] == 'a' ? PROGRAM_regression_a : PROGRAM_regression_c,
                  repo + "/build/" + build + "/regression");
  }
  std::vector<std::string> add = {"history", "add", "--commit", commits[0]};
  for (int run = 0; run < kRuns; ++run) {
    std::string profile = repo + "/good-" + std::to_string(run) + ".hotline";
    ASSERT_EQ(Hotline({"record", "-q", "-F", "10000", "-o", profile, "--",
                       repo + "/build/a/regression", "4000000"},
                      repo)
                  .exit_code,
              0);
    add.push_back(profile);
  }
  ASSERT_EQ(Hotline(add, repo).exit_code, 0);
  std::string script = repo + "/build/bisect.sh";
  std::string hotline = std::string("'") + HOTLINE_BIN + "'";
  std::ofstream(script) << "#!/bin/sh\n"
                        << "build=build/$(cat BUILD)/regression\n"
                        << "for i in 1 2 3 4 5; do\n"
                        << "  " << hotline
                        << " record -q -F 10000 -o run-$i.hotline -- $build 4000000 >/dev/null "
                           "|| exit 125\n"
                        << "done\n"
                        << hotline << " history add run-?.hotline >/dev/null || exit 125\n"
                        << "rm run-?.hotline\n"
                        << hotline << " check --baseline " << commits[0]
                        << " --threshold 25 --min-share 5\n"
                        << "status=$?\n"
                        << "[ $status -eq 2 ] && exit 125\n"
                        << "exit $status\n";
  fs::permissions(script, fs::perms::owner_all);
  Git(repo, {"bisect", "start", commits[3], commits[0]});
  RunResult bisect = Execute({"/usr/bin/git", "bisect", "run", script}, repo);
  Git(repo, {"bisect", "reset"});
  EXPECT_EQ(bisect.exit_code, 0) << bisect.out << bisect.err;
  EXPECT_NE(bisect.out.find(commits[2] + " is the first bad commit"), std::string::npos)
      << bisect.out << bisect.err;
}

}  // namespace
}  // namespace hotline

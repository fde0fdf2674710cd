// End to end for watched variables: programs that write known values are recorded with
// `hotline record --watch` (and call hotline_watch()), and every number `hotline report -W -m`
// gives is checked against what the sources say: writes, reads, min, max, distinct values, the
// most frequent ones and the lines that wrote them. Bad requests fail before the program runs.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace hotline {
namespace {

using testing::Hotline;
using testing::Load;
using testing::RecordAndCompare;
using testing::Recorded;
using testing::RunResult;
using testing::ScratchDir;

using Row = std::vector<std::string>;

// The line of `source` that holds `marker` (a comment beside the writing statement).
std::string LineOf(const std::string& source, const std::string& marker) {
  std::ifstream in(source);
  std::string text;
  for (int line = 1; std::getline(in, text); ++line)
    if (text.find(marker) != std::string::npos) return std::to_string(line);
  ADD_FAILURE() << marker << " not in " << source;
  return "?";
}

std::string Basename(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// `hotline report -W -m`: table name → rows of TAB-separated cells.
std::map<std::string, std::vector<Row>> WatchTables(const std::string& profile) {
  RunResult r = Hotline({"report", "-W", "-m", profile}, ScratchDir("watch_report"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::vector<Row>> tables;
  std::istringstream in(r.out);
  std::string line, table;
  while (std::getline(in, line)) {
    if (line.rfind("# ", 0) == 0) {
      table = line.substr(2);
      continue;
    }
    Row cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, '\t');) cells.push_back(cell);
    tables[table].push_back(cells);
  }
  return tables;
}

// The summary row of `variable`: writes, reads, lost, min, max, distinct, type, name.
Row Summary(const std::map<std::string, std::vector<Row>>& tables, const std::string& variable) {
  for (const Row& row : tables.at("watch"))
    if (row.size() == 8 && row[7] == variable) return row;
  ADD_FAILURE() << "no row for " << variable;
  return Row(8);
}

// variable → {"value": writes}.
std::map<std::string, std::map<std::string, std::string>> Values(
    const std::map<std::string, std::vector<Row>>& tables) {
  std::map<std::string, std::map<std::string, std::string>> values;
  for (const Row& row : tables.at("watch_values"))
    if (row.size() == 4) values[row[3]][row[2]] = row[0];
  return values;
}

// variable → {"function (file:line)" with the file's basename: writes}.
std::map<std::string, std::map<std::string, std::string>> Lines(
    const std::map<std::string, std::vector<Row>>& tables) {
  std::map<std::string, std::map<std::string, std::string>> lines;
  for (const Row& row : tables.at("watch_lines")) {
    if (row.size() != 4) continue;
    std::string where = row[3];
    size_t open = where.find(" (");
    if (open != std::string::npos) {
      std::string file = where.substr(open + 2);
      where = where.substr(0, open) + " (" + Basename(file);
    }
    lines[row[2]][where] = row[0];
  }
  return lines;
}

TEST(Watch, KnownWritesFromTwoThreadsAreCountedExactly) {
  Recorded r = RecordAndCompare("watch_known", {PROGRAM_watch_known},
                                {"--watch", "total,paint,ratio,watch_other.c:counter"});
  ASSERT_EQ(r.profiled.exit_code, 3);
  ASSERT_EQ(r.plain.out, "total=-500 ratio=2.0 paint=9 counter=30 other=14 ready=1\n");
  auto tables = WatchTables(r.profile);

  // writes, reads (not counted), lost, min, max, distinct, type.
  EXPECT_EQ(Summary(tables, "total"),
            (Row{"1500", "-", "0", "-500", "1000", "1500", "int64", "total"}));
  EXPECT_EQ(Summary(tables, "paint"),
            (Row{"10", "-", "0", "GREEN (5)", "BLUE (9)", "2", "enum", "paint"}));
  EXPECT_EQ(Summary(tables, "ratio"), (Row{"4", "-", "0", "0.5", "2", "4", "double", "ratio"}));
  EXPECT_EQ(Summary(tables, "watch_other.c:counter"),
            (Row{"7", "-", "0", "2", "14", "7", "int32", "watch_other.c:counter"}));

  auto values = Values(tables);
  EXPECT_EQ(values["paint"],
            (std::map<std::string, std::string>{{"GREEN (5)", "6"}, {"BLUE (9)", "4"}}));
  EXPECT_EQ(values["ratio"].size(), 4u);
  EXPECT_EQ(values["ratio"]["1.5"], "1");

  auto lines = Lines(tables);
  std::string known = SOURCE_watch_known, other = SOURCE_watch_other;
  EXPECT_EQ(lines["total"],
            (std::map<std::string, std::string>{
                {"worker (watch_known.c:" + LineOf(known, "WRITE total worker") + ")", "1000"},
                {"main (watch_known.c:" + LineOf(known, "WRITE total main") + ")", "500"}}));
  EXPECT_EQ(lines["paint"],
            (std::map<std::string, std::string>{
                {"main (watch_known.c:" + LineOf(known, "WRITE paint") + ")", "10"}}));
  EXPECT_EQ(lines["ratio"],
            (std::map<std::string, std::string>{
                {"worker (watch_known.c:" + LineOf(known, "WRITE ratio") + ")", "4"}}));
  EXPECT_EQ(lines["watch_other.c:counter"],
            (std::map<std::string, std::string>{
                {"bump_other (watch_other.c:" + LineOf(other, "WRITE counter other") + ")", "7"}}));

  // `total` was written by two threads, 1000 and 500 times, and the kernel's own counts agree
  // with the hits recorded.
  format::RawProfile raw = Load(r.profile);
  ASSERT_EQ(raw.watches.size(), 4u);
  uint64_t total_id = 0;
  for (const auto& w : raw.watches)
    if (w.name == "total") total_id = w.id;
  std::map<uint64_t, uint64_t> hits_per_thread, kernel_per_thread;
  for (const auto& record : raw.watch_hits) {
    for (const auto& hit : record.hits) hits_per_thread[record.tid] += hit.watch == total_id;
    for (const auto& total : record.totals)
      if (total.watch == total_id) kernel_per_thread[record.tid] += total.writes;
  }
  std::multiset<uint64_t> counts;
  for (const auto& [tid, hits] : hits_per_thread) counts.insert(hits);
  EXPECT_EQ(counts, (std::multiset<uint64_t>{500, 1000}));
  EXPECT_EQ(kernel_per_thread, hits_per_thread);

  // dump shows the records as they are.
  RunResult dump = Hotline({"dump", r.profile}, r.dir);
  EXPECT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_NE(dump.out.find("name=\"paint\" address=0x"), std::string::npos);
  EXPECT_NE(dump.out.find("type=enum flags=0x0 enumerators=RED=0,GREEN=5,BLUE=9"),
            std::string::npos);
  EXPECT_NE(dump.out.find("  total watch="), std::string::npos);

  // The HTML report carries the same figures for its watched-variables page.
  RunResult html = Hotline({"html", r.profile, "-o", r.dir + "/html"}, r.dir);
  ASSERT_EQ(html.exit_code, 0) << html.err;
  std::ifstream data(r.dir + "/html/data/data.js");
  std::string script((std::istreambuf_iterator<char>(data)), {});
  EXPECT_NE(script.find("\"watches\":{"), std::string::npos);
  EXPECT_NE(script.find("\"max\":\"BLUE (9)\",\"min\":\"GREEN (5)\",\"name\":\"paint\""),
            std::string::npos);
}

TEST(Watch, ReadsAreCountedWhenAsked) {
  Recorded r =
      RecordAndCompare("watch_reads", {PROGRAM_watch_known}, {"--watch", "total", "--watch-reads"});
  auto tables = WatchTables(r.profile);
  // Nothing reads `total` but the printf at the end: one read, whatever the runtime read itself.
  EXPECT_EQ(Summary(tables, "total"),
            (Row{"1500", "1", "0", "-500", "1000", "1500", "int64", "total"}));
}

TEST(Watch, ObjectsWatchedFromTheProgramForTheirLifetime) {
  Recorded r = RecordAndCompare("watch_api", {PROGRAM_watch_api});
  ASSERT_EQ(r.profiled.out, "cell=-1 acc=55\n");
  auto tables = WatchTables(r.profile);
  // The heap cell: i*i for i in 0..19; the write of -1 after hotline_unwatch is not seen.
  EXPECT_EQ(Summary(tables, "cell (hotline_watch)"),
            (Row{"20", "-", "0", "0", "361", "20", "int32", "cell (hotline_watch)"}));
  // The stack object: 1, 3, 6, ... 55.
  EXPECT_EQ(Summary(tables, "acc (hotline_watch)"),
            (Row{"10", "-", "0", "1", "55", "10", "int64", "acc (hotline_watch)"}));
  auto lines = Lines(tables);
  std::string api = SOURCE_watch_api;
  EXPECT_EQ(lines["cell"], (std::map<std::string, std::string>{
                               {"main (watch_api.c:" + LineOf(api, "WRITE cell") + ")", "20"}}));
  EXPECT_EQ(lines["acc"],
            (std::map<std::string, std::string>{
                {"sum_on_stack (watch_api.c:" + LineOf(api, "WRITE acc") + ")", "10"}}));
  // Beside `cell`, three of the four `extra` fit the debug registers; the fourth is refused,
  // and the profile says so.
  for (const char* name :
       {"extra0 (hotline_watch)", "extra1 (hotline_watch)", "extra2 (hotline_watch)"})
    EXPECT_EQ(Summary(tables, name)[0], "1") << name;
  for (const Row& row : tables.at("watch")) EXPECT_NE(row[7], "extra3 (hotline_watch)");
  format::RawProfile raw = Load(r.profile);
  size_t ended = 0;
  for (const auto& w : raw.watches) ended += (w.flags & format::kWatchEnded) != 0;
  EXPECT_EQ(ended, 5u);  // all were unwatched by the program
  bool refused = false;
  for (const std::string& note : raw.notes)
    refused |= note ==
               "hotline_watch(extra3): not watched: every watchpoint (4 debug registers) "
               "is in use";
  EXPECT_TRUE(refused);
  RunResult human = Hotline({"report", "-W", r.profile}, r.dir);
  EXPECT_NE(human.out.find("note: hotline_watch(extra3): not watched"), std::string::npos)
      << human.out;
}

// A request that cannot be met is one line on stderr, a non-zero exit, and the program never
// starts (it would print) and leaves no profile.
void ExpectRefused(const std::string& name, const std::vector<std::string>& options,
                   const std::string& program, const std::string& expected) {
  std::string dir = ScratchDir(name);
  std::vector<std::string> args = {"record", "-o", dir + "/p.hotline"};
  args.insert(args.end(), options.begin(), options.end());
  args.push_back("--");
  args.push_back(program);
  RunResult r = Hotline(args, dir);
  EXPECT_EQ(r.exit_code, 2) << name;
  EXPECT_EQ(r.out, "") << name << ": the program ran";
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
  struct stat st;
  EXPECT_NE(stat((dir + "/p.hotline").c_str(), &st), 0) << name << ": a profile was written";
}

TEST(Watch, BadRequestsFailBeforeTheProgramRuns) {
  ExpectRefused("watch_missing", {"--watch", "nosuch"}, PROGRAM_watch_known,
                "--watch nosuch: no global or static variable nosuch");
  ExpectRefused("watch_missing_in_file", {"--watch", "watch_other.c:total"}, PROGRAM_watch_known,
                "no global or static variable total in watch_other.c");
  ExpectRefused("watch_ambiguous", {"--watch", "counter"}, PROGRAM_watch_known,
                "counter is defined in several files");
  ExpectRefused("watch_wide", {"--watch", "wide"}, PROGRAM_watch_known,
                "wide is 16 bytes (long double): a watchpoint covers 1, 2, 4 or 8 bytes");
  ExpectRefused("watch_too_many", {"--watch", "total,paint,ratio,ready,cursor"},
                PROGRAM_watch_known, "5 variables need 5 hardware watchpoints; a thread has 4");
  ExpectRefused("watch_too_many_reads", {"--watch", "total,paint,ratio", "--watch-reads"},
                PROGRAM_watch_known, "need 6 hardware watchpoints");
  ExpectRefused("watch_static", {"--watch", "watch_other.c:counter"}, PROGRAM_watch_static,
                "is statically linked");
}

TEST(Watch, ReportWithoutWatchesSaysSo) {
  Recorded r = RecordAndCompare("watch_none", {PROGRAM_watch_known});
  RunResult report = Hotline({"report", "-W", r.profile}, r.dir);
  EXPECT_EQ(report.exit_code, 1);
  EXPECT_NE(report.err.find("the profile holds no watched variables"), std::string::npos)
      << report.err;
}

}  // namespace
}  // namespace hotline

// The pages hotline writes from data other than one profile: the history page from a HistoryInput
// made by hand (the series and commits in its data, escaped; bad input refused; the directory
// rules every report keeps), opened in headless Chromium when it is installed; and the
// differential flame graph of two hand-made profiles, whose every frame's numbers are known.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"
#include "html/diff.h"
#include "html/history.h"
#include "report_files.h"

namespace hotline {
namespace {

namespace fs = std::filesystem;
using testing::ReadReportData;

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Four commits, oldest first: the third has no runs, the fourth is dirty and 21% slower; a
// subject and a function name that would be markup if the page took them as such.
html::HistoryInput SmallHistory() {
  html::HistoryInput in;
  in.database = "/srv/perf/runs.sqlite";
  in.workload = "parse <big> & small";
  in.commits = {
      {"a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", "first", "main", 1700000000, false},
      {"b2c3d4e5f60718293a4b5c6d7e8f901234567890", "</script><img src=x onerror=alert(1)>", "main",
       1700003600, false},
      {"c3d4e5f60718293a4b5c6d7e8f90123456789012", "docs only", "main", 1700007200, false},
      {"d4e5f60718293a4b5c6d7e8f9012345678901234", "make it slower", "", 1700010800, true},
  };
  html::HistorySeries total;
  total.name = "total";
  total.self = false;
  total.values = {html::HistoryValue{3, 100e6, 98e6, 103e6},
                  html::HistoryValue{3, 101e6, 99e6, 102e6}, std::nullopt,
                  html::HistoryValue{2, 121.4e6, 120e6, 122.8e6}};
  total.change_at = 3;
  total.change = 0.213;
  html::HistorySeries work;
  work.name = "operator<(Box const&, Box const&)";
  work.file = "src/box.cc";
  work.values = {html::HistoryValue{3, 40e6, 39e6, 41e6}, html::HistoryValue{3, 40.5e6, 40e6, 41e6},
                 std::nullopt, html::HistoryValue{2, 60e6, 59e6, 61e6}};
  in.series = {total, work};
  return in;
}

TEST(HistoryPage, HoldsTheSeriesAndTheCommitsEscaped) {
  std::string dir = testing::ScratchDir("history-page") + "/history";
  ASSERT_TRUE(html::WriteHistoryReport(SmallHistory(), dir).ok());
  for (const char* file : {"index.html", "report.js", "report.css", "data/data.js"})
    EXPECT_TRUE(fs::exists(dir + "/" + file)) << file;
  std::string script = Read(dir + "/data/data.js");
  EXPECT_EQ(script.find_first_of("<>&"), std::string::npos) << "markup in the data: " << script;
  EXPECT_NE(script.find("\\u003c/script\\u003e\\u003cimg src=x"), std::string::npos);
  nlohmann::json h = ReadReportData(dir + "/data/data.js")["history"];
  EXPECT_EQ(h["database"], "/srv/perf/runs.sqlite");
  EXPECT_EQ(h["workload"], "parse <big> & small");
  ASSERT_EQ(h["commits"].size(), 4u);
  EXPECT_EQ(h["commits"][0]["short"], "a1b2c3d");
  EXPECT_EQ(h["commits"][0]["date"], "2023-11-14 22:13 UTC");
  EXPECT_EQ(h["commits"][1]["subject"], "</script><img src=x onerror=alert(1)>");
  EXPECT_EQ(h["commits"][3]["dirty"], true);
  EXPECT_EQ(h["commits"][3]["branch"], "");
  ASSERT_EQ(h["series"].size(), 2u);
  const nlohmann::json& total = h["series"][0];
  EXPECT_EQ(total["name"], "total");
  EXPECT_EQ(total["values"][0], nlohmann::json({3, 100000000, 98000000, 103000000}));
  EXPECT_TRUE(total["values"][2].is_null()) << "a commit without runs is a gap";
  EXPECT_EQ(total["values"][3], nlohmann::json({2, 121400000, 120000000, 122800000}));
  EXPECT_EQ(total["change_at"], 3);
  EXPECT_EQ(total["label"], "+21% from d4e5f60");
  const nlohmann::json& work = h["series"][1];
  EXPECT_EQ(work["name"], "operator<(Box const&, Box const&)");
  EXPECT_EQ(work["file"], "src/box.cc");
  EXPECT_EQ(work["self"], true);
  EXPECT_TRUE(work["change_at"].is_null());
  EXPECT_EQ(work["label"], "");
}

TEST(HistoryPage, RefusesSeriesThatDoNotFitTheCommits) {
  std::string parent = testing::ScratchDir("history-bad");
  html::HistoryInput in = SmallHistory();
  in.series[1].values.pop_back();
  Status s = html::WriteHistoryReport(in, parent + "/out");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("3 values for 4 commits"), std::string::npos) << s.message();
  in = SmallHistory();
  in.series[0].change_at = 4;
  EXPECT_FALSE(html::WriteHistoryReport(in, parent + "/out").ok());
  EXPECT_TRUE(fs::is_empty(parent)) << "something was left behind";
}

TEST(HistoryPage, ReplacesAnEarlierReportAndNothingElse) {
  std::string parent = testing::ScratchDir("history-replace");
  ASSERT_TRUE(html::WriteHistoryReport(SmallHistory(), parent + "/out").ok());
  std::ofstream(parent + "/out/data/stale.js") << "old";
  ASSERT_TRUE(html::WriteHistoryReport(SmallHistory(), parent + "/out").ok());
  EXPECT_FALSE(fs::exists(parent + "/out/data/stale.js"));
  fs::create_directory(parent + "/mine");
  std::ofstream(parent + "/mine/notes.txt") << "keep me";
  EXPECT_FALSE(html::WriteHistoryReport(SmallHistory(), parent + "/mine").ok());
  EXPECT_EQ(Read(parent + "/mine/notes.txt"), "keep me");
  EXPECT_FALSE(fs::exists(parent + "/mine/index.html"));
}

using HistoryBrowser = testing::HtmlBrowser;

TEST_F(HistoryBrowser, DrawsAChartPerSeries) {
  std::string dir = testing::ScratchDir("history-browser") + "/history";
  ASSERT_TRUE(html::WriteHistoryReport(SmallHistory(), dir).ok());
  testing::RunResult run = Browse({"history", dir, "2"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}

// BASE: main → work 1000 ns, main → old 500 ns; NEW: main → work 2000 ns, main → fresh 300 ns.
// One sample a nanosecond: work's doubling is far beyond its noise.
model::Profile TwoPaths(bool next, format::ClockMode clock = format::ClockMode::kCpu) {
  model::Profile p;
  for (const char* name : {"main", "work", next ? "fresh" : "old"})
    p.functions.emplace_back().name = name;
  auto frame = [](uint32_t f) { return model::StackFrame{.function = model::FunctionId(f)}; };
  p.addStack(std::vector<model::StackFrame>{frame(0), frame(1)});
  p.addStack(std::vector<model::StackFrame>{frame(0), frame(2)});
  uint64_t work = next ? 2000 : 1000, other = next ? 300 : 500;
  p.stack_times = {{model::StackId(0u), 0, work, work}, {model::StackId(1u), 0, other, other}};
  p.threads.resize(1);
  p.functions[0].inclusive_ns = work + other;
  p.functions[1].self_ns = p.functions[1].inclusive_ns = work;
  p.functions[2].self_ns = p.functions[2].inclusive_ns = other;
  p.summary.total_ns = work + other;
  p.summary.samples = work + other;
  p.summary.period_ns = 1;
  p.summary.clock = clock;
  return p;
}

// The frames of one graph of a diff report: function name → [base, new, state, change].
std::map<std::string, nlohmann::json> Frames(const std::string& dir, const std::string& graph) {
  nlohmann::json data = ReadReportData(dir + "/data/data.js");
  nlohmann::json t = ReadReportData(dir + "/data/" + graph + ".js");
  std::map<std::string, nlohmann::json> frames;
  for (size_t i = 0; i < t["f"].size(); ++i) {
    int64_t f = t["f"][i];
    std::string name = f < 0 ? "(root)" : data["functions"]["name"][f].get<std::string>();
    frames[name] = {t["b"][i], t["n"][i], t["q"][i], t["c"][i]};
  }
  return frames;
}

TEST(DiffPage, ColoursByTheChangeAndKeepsVanishedTime) {
  model::Profile base = TwoPaths(false), next = TwoPaths(true);
  std::string dir = testing::ScratchDir("diff-page") + "/diff";
  ASSERT_TRUE(html::WriteDiffReport({&base, &next, "a.hotline", "b.hotline", {}, {}}, dir).ok());
  // NEW's shape: work doubled (beyond the noise), fresh is new, old has no frame.
  auto frames = Frames(dir, "diff-new-callers");
  EXPECT_EQ(frames.size(), 4u);
  EXPECT_EQ(frames["(root)"], nlohmann::json({1500, 2300, 1, 0.5333}));
  EXPECT_EQ(frames["work"], nlohmann::json({1000, 2000, 1, 1.0}));
  EXPECT_EQ(frames["fresh"], nlohmann::json({0, 300, 2, 0.0}));
  EXPECT_FALSE(frames.contains("old"));
  // BASE's shape: old is there, gone; fresh has no frame.
  frames = Frames(dir, "diff-base-callers");
  EXPECT_EQ(frames["old"], nlohmann::json({500, 0, 3, -1.0}));
  EXPECT_FALSE(frames.contains("fresh"));
  // Callees first: the innermost frames are the roots' children.
  frames = Frames(dir, "diff-new-callees");
  EXPECT_EQ(frames["work"], nlohmann::json({1000, 2000, 1, 1.0}));
  // The time with no place in each shape is said.
  nlohmann::json d = ReadReportData(dir + "/data/data.js")["diff"];
  EXPECT_EQ(d["graphs"]["new"]["callers"]["missing_ns"], 500);
  EXPECT_EQ(d["graphs"]["base"]["callers"]["missing_ns"], 300);
  EXPECT_EQ(d["graphs"]["new"]["callees"]["missing_ns"], 500);
  EXPECT_EQ(d["change"], 0.5333);
  EXPECT_EQ(d["base"]["path"], "a.hotline");
  // hotline diff's tables: work slower, old gone, fresh new.
  nlohmann::json changes = ReadReportData(dir + "/data/changes.js");
  std::map<std::string, std::string> verdicts;
  for (const nlohmann::json& row : changes["self"]["rows"]) verdicts[row[0]] = row[9];
  EXPECT_EQ(verdicts, (std::map<std::string, std::string>{
                          {"work", "slower"}, {"old", "gone"}, {"fresh", "new"}}));
}

TEST(DiffPage, SmallChangesAtFewSamplesStayNeutral) {
  model::Profile base = TwoPaths(false), next = TwoPaths(false);
  // 10 samples against 12: a 20% change the counts cannot tell from noise.
  base.stack_times = {{model::StackId(0u), 0, 10, 10}, {model::StackId(1u), 0, 10, 10}};
  next.stack_times = {{model::StackId(0u), 0, 12, 12}, {model::StackId(1u), 0, 10, 10}};
  std::string dir = testing::ScratchDir("diff-noise") + "/diff";
  ASSERT_TRUE(html::WriteDiffReport({&base, &next, "a", "b", {}, {}}, dir).ok());
  auto frames = Frames(dir, "diff-new-callers");
  EXPECT_EQ(frames["work"], nlohmann::json({10, 12, 0, 0.2}));
  EXPECT_EQ(frames["old"], nlohmann::json({10, 10, 0, 0.0}));
}

TEST(DiffPage, RefusesCpuTimeAgainstElapsedTime) {
  model::Profile base = TwoPaths(false), next = TwoPaths(true, format::ClockMode::kWall);
  std::string parent = testing::ScratchDir("diff-clock");
  Status s = html::WriteDiffReport({&base, &next, "a", "b", {}, {}}, parent + "/out");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("do not compare"), std::string::npos) << s.message();
  EXPECT_TRUE(fs::is_empty(parent));
}

}  // namespace
}  // namespace hotline

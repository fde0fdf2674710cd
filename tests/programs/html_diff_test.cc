// `hotline html --diff`: slow_path's frame, twice as slow, is marked slower and the thirty other_N
// frames, whose counts moved by up to 3%, are left neutral (on profiles written with known counts:
// the classification is arithmetic on counts, and a busy machine's drift between two recorded
// runs is larger than any noise band); on the two builds of regression.c recorded, a profile
// against itself colours nothing and bad input is refused with one line and nothing left behind;
// the page draws the slowdown in red in Chromium.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness.h"
#include "report_files.h"
#include "sample_profile.h"

namespace hotline {
namespace {

namespace fs = std::filesystem;
using testing::ExpectNoLeftovers;
using testing::Hotline;
using testing::HtmlBrowser;
using testing::Lines;
using testing::ReadReportData;
using testing::RunResult;
using testing::ScratchDir;

struct Profiles {
  std::string dir, a, b;
};

// A profile of each build (regression_a, then regression_c), each given `work` per function.
Profiles RecordBoth(const std::string& name, const std::string& work) {
  Profiles r;
  r.dir = ScratchDir(name);
  r.a = r.dir + "/a.hotline";
  r.b = r.dir + "/b.hotline";
  for (auto [program, path] :
       {std::pair{PROGRAM_regression_a, r.a}, std::pair{PROGRAM_regression_c, r.b}}) {
    RunResult recorded =
        Hotline({"record", "-q", "-F", "10000", "-o", path, "--", program, work}, r.dir);
    EXPECT_EQ(recorded.exit_code, 0) << recorded.err;
  }
  return r;
}

// regression.c's two builds as profiles of known counts: slow_path's doubled, the others' moved by
// up to 3%.
Profiles WriteBoth(const std::string& name) {
  Profiles r;
  r.dir = ScratchDir(name);
  r.a = r.dir + "/a.hotline";
  r.b = r.dir + "/b.hotline";
  EXPECT_TRUE(testing::WriteRegressionProfile(r.a, 3000, 1));
  EXPECT_TRUE(testing::WriteRegressionProfile(r.b, 6000, 2));
  return r;
}

// The frames of one graph of the diff report in `report`.
struct Frame {
  std::string name;  // empty for the root
  uint64_t base_ns, new_ns;
  int state;  // 0 within the noise, 1 beyond, 2 only in NEW, 3 only in BASE
  double change;
};
std::vector<Frame> FramesOf(const std::string& report, const std::string& graph) {
  nlohmann::json data = ReadReportData(report + "/data/data.js");
  nlohmann::json t = ReadReportData(report + "/data/" + graph + ".js");
  std::vector<Frame> frames;
  if (data.is_null() || t.is_null()) return frames;
  for (size_t i = 0; i < t["f"].size(); ++i) {
    int64_t f = t["f"][i];
    frames.push_back({f < 0 ? "" : data["functions"]["name"][f].get<std::string>(), t["b"][i],
                      t["n"][i], t["q"][i], t["c"][i]});
  }
  return frames;
}

constexpr const char* kGraphs[] = {"diff-new-callers", "diff-new-callees", "diff-base-callers",
                                   "diff-base-callees"};

TEST(HtmlDiff, MarksTheSlowdownAndLeavesTheNoiseNeutral) {
  Profiles r = WriteBoth("html-diff");
  RunResult html = Hotline({"html", "--diff", r.a, r.b, "-o", "diff"}, r.dir);
  ASSERT_EQ(html.exit_code, 0) << html.err;
  std::string report = r.dir + "/diff";
  for (const char* graph : kGraphs)
    EXPECT_TRUE(fs::exists(report + "/data/" + graph + ".js")) << graph;
  int slow_path = 0, others = 0, neutral = 0;
  for (const Frame& f : FramesOf(report, "diff-new-callers")) {
    if (f.name == "slow_path") {
      ++slow_path;
      EXPECT_EQ(f.state, 1) << "slow_path's change " << f.change << " is not beyond the noise";
      EXPECT_GT(f.change, 0);
      EXPECT_GT(f.new_ns, f.base_ns);
    }
    if (f.name.starts_with("other_")) {
      ++others;
      neutral += f.state == 0;
    }
  }
  EXPECT_EQ(slow_path, 1);
  EXPECT_EQ(others, 30);
  EXPECT_EQ(neutral, 30) << "of the 30 other_N frames, whose counts moved by 3% at most";
  // The header names both sides; hotline diff's table puts slow_path's change beyond the noise
  // too, as its frame does.
  nlohmann::json data = ReadReportData(report + "/data/data.js");
  EXPECT_EQ(data["diff"]["base"]["path"], r.a);
  EXPECT_EQ(data["diff"]["new"]["path"], r.b);
  nlohmann::json changes = ReadReportData(report + "/data/changes.js");
  bool found = false;
  for (const nlohmann::json& row : changes["self"]["rows"])
    if (row[0] == "slow_path") {
      found = true;
      EXPECT_GT(row[4].get<double>(), row[3].get<double>());
      EXPECT_GT(row[7].get<double>(), 0) << row.dump();  // the interval's low end
    }
  EXPECT_TRUE(found) << changes["self"].dump();
}

TEST(HtmlDiff, AProfileAgainstItselfColoursNothing) {
  Profiles r = RecordBoth("html-diff-same", "1000000");
  RunResult html = Hotline({"html", "--diff", r.a, r.a, "-o", "same"}, r.dir);
  ASSERT_EQ(html.exit_code, 0) << html.err;
  for (const char* graph : kGraphs) {
    std::vector<Frame> frames = FramesOf(r.dir + "/same", graph);
    EXPECT_GT(frames.size(), 30u) << graph;
    for (const Frame& f : frames) {
      EXPECT_EQ(f.state, 0) << graph << ": " << f.name;
      EXPECT_EQ(f.change, 0) << graph << ": " << f.name;
      EXPECT_EQ(f.base_ns, f.new_ns) << graph << ": " << f.name;
    }
  }
  nlohmann::json data = ReadReportData(r.dir + "/same/data/data.js");
  EXPECT_EQ(data["diff"]["change"], 0);
  EXPECT_EQ(data["diff"]["graphs"]["new"]["callers"]["missing_ns"], 0);
  EXPECT_EQ(ReadReportData(r.dir + "/same/data/changes.js")["self"]["rows"].size(), 0u);
}

TEST(HtmlDiff, BadInputIsOneLineAndLeavesNothing) {
  Profiles r = RecordBoth("html-diff-bad", "1000000");
  std::string dir = ScratchDir("html-diff-bad-out");
  auto refused = [&](const std::vector<std::string>& args, int exit_code, const char* says) {
    RunResult run = Hotline(args, dir);
    EXPECT_EQ(run.exit_code, exit_code) << run.err;
    EXPECT_EQ(Lines(run.err), 1u) << run.err;
    EXPECT_NE(run.err.find(says), std::string::npos) << run.err;
    EXPECT_FALSE(fs::exists(dir + "/out"));
    ExpectNoLeftovers(dir);
  };
  refused({"html", "--diff", r.a, "missing.hotline", "-o", "out"}, 1, "missing.hotline");
  std::ofstream(dir + "/corrupt.hotline") << "this is not a profile at all, just some text\n";
  refused({"html", "--diff", "corrupt.hotline", r.b, "-o", "out"}, 1, "corrupt.hotline");
  refused({"html", "--diff", r.a, "-o", "out"}, 2, "two profiles");
  refused({"html", "--diff", r.a, r.b, r.a, "-o", "out"}, 2, "two profiles");
  refused({"html", r.a, r.b, "-o", "out"}, 2, "--diff");
  // CPU time against elapsed time.
  std::string wall = dir + "/wall.hotline";
  RunResult recorded = Hotline(
      {"record", "-q", "--clock", "wall", "-o", wall, "--", PROGRAM_regression_a, "1000000"}, dir);
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  refused({"html", "--diff", r.a, wall, "-o", "out"}, 1, "do not compare");
}

TEST_F(HtmlBrowser, DiffDrawsTheSlowdownInRed) {
  Profiles r = WriteBoth("html-diff-browser");
  RunResult html = Hotline({"html", "--diff", r.a, r.b, "-o", "diff"}, r.dir);
  ASSERT_EQ(html.exit_code, 0) << html.err;
  fs::create_directories(HTML_SCREENSHOT_DIR);
  RunResult run =
      Browse({"diff", r.dir + "/diff", "slow_path", HTML_SCREENSHOT_DIR "/html-diff.png"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}

}  // namespace
}  // namespace hotline

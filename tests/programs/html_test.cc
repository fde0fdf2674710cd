// `hotline html` end to end: real programs recorded, their reports written, the files checked
// (everything local, every data file escaped), bad input refused with nothing left behind, and
// the reports opened in headless Chromium (tests/browser/report_test.js) when it is installed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"
#include "report_files.h"

namespace hotline {
namespace {

namespace fs = std::filesystem;
using testing::ExpectNoLeftovers;
using testing::Hotline;
using testing::HtmlBrowser;
using testing::Lines;
using testing::RunResult;
using testing::ScratchDir;

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Records `program` (with `options`) and writes its report into DIR/report.
struct Report {
  std::string dir, profile, report;
  RunResult html;
};
Report RecordAndReport(const std::string& name, const std::string& program,
                       const std::vector<std::string>& options = {}) {
  Report r;
  r.dir = ScratchDir("html-" + name);
  r.profile = r.dir + "/p.hotline";
  r.report = r.dir + "/report";
  std::vector<std::string> record = {"record", "-q", "-o", r.profile};
  record.insert(record.end(), options.begin(), options.end());
  record.insert(record.end(), {"--", program});
  RunResult recorded = Hotline(record, r.dir);
  EXPECT_EQ(recorded.exit_code, 0) << recorded.err;
  r.html = Hotline({"html", r.profile, "-o", r.report}, r.dir);
  EXPECT_EQ(r.html.exit_code, 0) << r.html.err;
  return r;
}

// Every file's bytes, by path relative to the report.
std::vector<std::pair<std::string, std::string>> FilesOf(const std::string& report) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& e : fs::recursive_directory_iterator(report))
    if (e.is_regular_file())
      files.emplace_back(fs::relative(e.path(), report).string(), Read(e.path()));
  return files;
}

TEST(Html, WritesAReportThatNeedsNothingFromOutside) {
  Report r = RecordAndReport("target", PROGRAM_html_target);
  ASSERT_TRUE(fs::exists(r.report + "/index.html"));
  auto files = FilesOf(r.report);
  std::vector<std::string> names;
  for (const auto& [name, bytes] : files) names.push_back(name);
  for (const char* expected :
       {"index.html", "report.js", "report.css", "data/data.js", "data/flame-all-callers.js",
        "data/flame-all-callees.js", "data/table-T.js", "data/table-G.js", "data/table-P.js"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  bool source = false;
  for (const auto& [name, bytes] : files) {
    // No network: nothing refers to a server.
    for (const char* remote : {"src=\"http", "href=\"http", "url(http", "@import", "//cdn"})
      EXPECT_EQ(bytes.find(remote), std::string::npos) << name << " refers to " << remote;
    if (name.starts_with("data/source-") && bytes.find("html_target.c") != std::string::npos) {
      source = true;
      EXPECT_NE(bytes.find("burn_cpu(0.4); /* HOT"), std::string::npos);
    }
  }
  EXPECT_TRUE(source) << "html_target.c is not among the sources";
  std::string data = Read(r.report + "/data/data.js");
  EXPECT_TRUE(data.starts_with("(window.HOTLINE = window.HOTLINE || {})[\"data\"] = {"));
  EXPECT_NE(data.find("\"hot\""), std::string::npos);
  EXPECT_NE(data.find("\"cold\""), std::string::npos);
  // The texprofile table is report's, byte for byte (as a JSON string).
  RunResult top = Hotline({"report", "-T", "-N", r.profile}, r.dir);
  EXPECT_NE(Read(r.report + "/data/table-T.js").find("Top 10 lines"), std::string::npos);
  EXPECT_NE(top.out.find("Top 10 lines"), std::string::npos);
}

TEST(Html, EscapesHostileNamesAndSources) {
  Report r = RecordAndReport("hostile", PROGRAM_html_hostile);
  bool saw_source = false, saw_name = false;
  for (const auto& [name, bytes] : FilesOf(r.report)) {
    if (!name.starts_with("data/")) continue;
    // Data files hold no markup character at all: `<`, `>` and `&` are \u escapes in JSON.
    EXPECT_EQ(bytes.find_first_of("<>&"), std::string::npos) << name;
    if (bytes.find("\\u003c/script\\u003e\\u003cimg src=x onerror=") != std::string::npos)
      saw_source = true;
    if (bytes.find("operator\\u003c(Box const\\u0026") != std::string::npos) saw_name = true;
  }
  EXPECT_TRUE(saw_source) << "the hostile source text is not in the report";
  EXPECT_TRUE(saw_name) << "operator<(Box const&, Box const&) is not in the report";
}

TEST(Html, HeapProfileGetsItsPage) {
  Report r = RecordAndReport("heap", PROGRAM_heap_known, {"--heap"});
  std::string data = Read(r.report + "/data/data.js");
  EXPECT_NE(data.find("\"heap\":{"), std::string::npos);
  EXPECT_NE(data.find("\"peak_bytes\""), std::string::npos);
}

TEST(Html, BadInputIsOneLineAndLeavesNothing) {
  std::string dir = ScratchDir("html-bad");
  // A missing profile.
  RunResult missing = Hotline({"html", "nothing.hotline", "-o", "out"}, dir);
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_EQ(Lines(missing.err), 1u) << missing.err;
  EXPECT_NE(missing.err.find("nothing.hotline"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(dir + "/out"));
  // A file that is not a profile.
  std::ofstream(dir + "/corrupt.hotline") << "this is not a profile at all, just some text\n";
  RunResult corrupt = Hotline({"html", "corrupt.hotline", "-o", "out"}, dir);
  EXPECT_NE(corrupt.exit_code, 0);
  EXPECT_EQ(Lines(corrupt.err), 1u) << corrupt.err;
  EXPECT_FALSE(fs::exists(dir + "/out"));
  // No -o.
  RunResult no_output = Hotline({"html", "corrupt.hotline"}, dir);
  EXPECT_NE(no_output.exit_code, 0);

  Report good = RecordAndReport("bad-good", PROGRAM_html_target);
  // A directory that cannot be made (its parent is a file): one line, nothing left behind.
  std::ofstream(good.dir + "/plain-file") << "x";
  RunResult unwritable = Hotline({"html", good.profile, "-o", "plain-file/out"}, good.dir);
  EXPECT_NE(unwritable.exit_code, 0);
  EXPECT_EQ(Lines(unwritable.err), 1u) << unwritable.err;
  EXPECT_NE(unwritable.err.find("plain-file/out"), std::string::npos) << unwritable.err;
  ExpectNoLeftovers(good.dir);
  // A directory of someone else's files is refused and kept as it was.
  fs::create_directory(good.dir + "/mine");
  std::ofstream(good.dir + "/mine/notes.txt") << "keep me";
  RunResult refused = Hotline({"html", good.profile, "-o", "mine"}, good.dir);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_EQ(Lines(refused.err), 1u) << refused.err;
  EXPECT_EQ(Read(good.dir + "/mine/notes.txt"), "keep me");
  EXPECT_FALSE(fs::exists(good.dir + "/mine/index.html"));
  // An earlier report is replaced whole.
  std::ofstream(good.report + "/data/stale.js") << "old";
  RunResult again = Hotline({"html", good.profile, "-o", "report"}, good.dir);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_FALSE(fs::exists(good.report + "/data/stale.js"));
  EXPECT_TRUE(fs::exists(good.report + "/index.html"));
  ExpectNoLeftovers(good.dir);
}

TEST_F(HtmlBrowser, DrawsTheHotFunctionAndOpensItsHotLine) {
  Report r = RecordAndReport("browser", PROGRAM_html_target);
  fs::create_directories(HTML_SCREENSHOT_DIR);
  RunResult run = Browse({"main", r.report, "hot", "cold", "html_target.c", "10",
                          HTML_SCREENSHOT_DIR "/html-report.png"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(fs::exists(HTML_SCREENSHOT_DIR "/html-report.png"));
}

TEST_F(HtmlBrowser, HostileTextRunsNoScript) {
  Report r = RecordAndReport("browser-hostile", PROGRAM_html_hostile);
  RunResult run = Browse({"hostile", r.report});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}

TEST_F(HtmlBrowser, TimelineDrawsATimedTracesCalls) {
  Report r = RecordAndReport("browser-timeline", PROGRAM_trace_fib, {"--trace=timed", "-F", "0"});
  RunResult run = Browse({"timeline", r.report});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}

TEST_F(HtmlBrowser, HeapPageDraws) {
  Report r = RecordAndReport("browser-heap", PROGRAM_heap_sites, {"--heap"});
  RunResult run = Browse({"heap", r.report});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}

}  // namespace
}  // namespace hotline

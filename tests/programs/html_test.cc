// `hotline html` end to end: real programs recorded, their reports written, the files checked
// (everything local, every data file escaped), bad input refused with nothing left behind, and
// the reports opened in headless Chromium (tests/browser/report_test.js) when it is installed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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
using testing::Execute;
using testing::ExpectNoLeftovers;
using testing::Hotline;
using testing::HtmlBrowser;
using testing::Lines;
using testing::ProfilesIn;
using testing::ReadReportData;
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

// A sweep of complexity_prog's polynomial functions, built with --coverage (exact line counts),
// one run per size, in DIR/poly.
std::string Sweep(const std::string& name) {
  std::string dir = ScratchDir("html-" + name);
  RunResult sweep = Hotline({"sweep", "--sizes", "16,32,64,128,256,512,1024", "--trace=timed", "-o",
                             "poly", "--", PROGRAM_complexity_prog_cov, "poly", "{n}"},
                            dir);
  EXPECT_EQ(sweep.exit_code, 0) << sweep.err;
  return dir;
}

// The plot of `function`'s `measured` in a report's data/complexity.js; null when there is none.
nlohmann::json FindPlot(const nlohmann::json& complexity, const std::string& function,
                        const std::string& measured) {
  for (const nlohmann::json& plot : complexity["plots"])
    if (plot["short"] == function && plot["row"][11] == measured) return plot;
  return nullptr;
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
  // No sizes, no complexity page.
  EXPECT_FALSE(fs::exists(r.report + "/data/complexity.js"));
  std::string data = Read(r.report + "/data/data.js");
  EXPECT_TRUE(data.starts_with("(window.HOTLINE = window.HOTLINE || {})[\"data\"] = {"));
  EXPECT_NE(data.find("\"hot\""), std::string::npos);
  EXPECT_NE(data.find("\"cold\""), std::string::npos);
  // The texprofile table is report's, byte for byte (as a JSON string).
  RunResult top = Hotline({"report", "-T", "-N", r.profile}, r.dir);
  EXPECT_NE(Read(r.report + "/data/table-T.js").find("Top 10 lines"), std::string::npos);
  EXPECT_NE(top.out.find("Top 10 lines"), std::string::npos);
}

// Line 21 of html_target.c (`hot() + cold()`) gave its time to hot and to cold: each callee's
// time on that line is the callee's inclusive time (the only place either is called), the
// hotter first.
TEST(Html, ACallingLineGivesItsTimeToEachCallee) {
  Report r = RecordAndReport("calls", PROGRAM_html_target);
  nlohmann::json data = ReadReportData(r.report + "/data/data.js");
  const nlohmann::json& names = data["functions"]["name"];
  const nlohmann::json& inclusive = data["functions"]["inclusive"];
  nlohmann::json source;
  for (size_t i = 0; i < data["files"].size(); ++i)
    if (data["files"][i]["path"].get<std::string>().ends_with("html_target.c"))
      source = ReadReportData(r.report + "/data/source-" + std::to_string(i) + ".js");
  ASSERT_TRUE(source.is_object());
  std::map<std::string, uint64_t> on_21;
  std::vector<std::string> order;
  for (const nlohmann::json& call : source["calls"])
    if (call[0] == 21) {
      std::string callee = names[call[1].get<size_t>()];
      on_21[callee] = call[2].get<uint64_t>();
      order.push_back(callee);
      EXPECT_EQ(call[2].get<uint64_t>(), inclusive[call[1].get<size_t>()].get<uint64_t>())
          << callee;
    }
  EXPECT_GT(on_21["hot"], on_21["cold"]);
  EXPECT_GT(on_21["cold"], 0u);
  ASSERT_FALSE(order.empty());
  EXPECT_EQ(order.front(), "hot");
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

// A sweep's directory, or its files, is read as report -X reads it: the runs added up for the
// other pages, and each run's size and counts for the complexity page. Models are checked on the
// exact line counts only; the timed rows only for their shape.
TEST(Html, SweepGetsAComplexityPage) {
  std::string dir = Sweep("sweep");
  RunResult html = Hotline({"html", "poly", "-o", "report"}, dir);
  ASSERT_EQ(html.exit_code, 0) << html.err;
  nlohmann::json data = ReadReportData(dir + "/report/data/data.js");
  EXPECT_NE(data["profile"].get<std::string>().find("(7 runs)"), std::string::npos)
      << data["profile"];
  ASSERT_TRUE(data.contains("complexity"));
  nlohmann::json complexity = ReadReportData(dir + "/report/data/complexity.js");
  ASSERT_TRUE(complexity.contains("plots"));
  // The same rows as report -X, decided ones first.
  RunResult table = Hotline({"report", "-X", "-m", "poly"}, dir);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(complexity["plots"].size(), Lines(table.out));
  int rank = 0;
  for (const nlohmann::json& plot : complexity["plots"]) {
    std::string verdict = plot["row"][0];
    int r = verdict == "decided" ? 0 : verdict == "undecided" ? 1 : 2;
    EXPECT_GE(r, rank) << plot["short"] << " " << verdict << " after a later verdict";
    rank = std::max(rank, r);
    // A decided row draws its model; an undecided one each candidate.
    for (const nlohmann::json& curve : plot["curves"])
      EXPECT_EQ(curve["decided"].get<bool>(), verdict == "decided") << plot["short"];
    if (verdict == "decided") {
      EXPECT_EQ(plot["curves"].size(), 1u) << plot["short"];
    } else if (verdict == "undecided") {
      EXPECT_GE(plot["curves"].size(), 1u) << plot["short"];
    }
  }

  nlohmann::json sort = FindPlot(complexity, "insertion_sort", "lines/run");
  ASSERT_FALSE(sort.is_null());
  EXPECT_EQ(sort["row"][0], "decided");
  EXPECT_EQ(sort["row"][1], "O(n^2)");
  EXPECT_EQ(sort["row"][7], "16");
  EXPECT_EQ(sort["row"][8], "1024");
  EXPECT_TRUE(sort["counted"].get<bool>());
  EXPECT_TRUE(sort["log_n"].get<bool>());  // 16 … 1024 spans two decades
  ASSERT_EQ(sort["points"].size(), 7u);
  ASSERT_EQ(sort["curves"].size(), 1u);
  const nlohmann::json& curve = sort["curves"][0];
  EXPECT_EQ(curve["model"], "O(n^2)");
  // The curve passes through every point: its value at each size is within 1% of the largest
  // point (3 pixels of the plot's 226). Insertion sort of n random numbers runs about n²/4
  // inner steps, each the same lines: a + b·n² fits them closely.
  double largest = 0;
  for (const nlohmann::json& point : sort["points"])
    largest = std::max(largest, point[1].get<double>());
  for (const nlohmann::json& point : sort["points"]) {
    double n = point[0], v = point[1];
    auto at = std::find_if(curve["samples"].begin(), curve["samples"].end(),
                           [&](const nlohmann::json& s) { return s[0].get<double>() == n; });
    ASSERT_NE(at, curve["samples"].end()) << "no curve sample at n = " << n;
    EXPECT_LT(std::fabs((*at)[1].get<double>() - v), 0.01 * largest) << "n = " << n;
  }
  // Times are drawn too: one point per run.
  nlohmann::json timed = FindPlot(complexity, "insertion_sort", "time/run");
  ASSERT_FALSE(timed.is_null());
  EXPECT_EQ(timed["points"].size(), 7u);
  EXPECT_FALSE(timed["counted"].get<bool>());

  // The runs named one by one (DIR/n*.hotline) make the same page.
  std::vector<std::string> args = {"html", "-o", "by-files"};
  for (const std::string& run : ProfilesIn(dir + "/poly")) args.push_back(run);
  RunResult files = Hotline(args, dir);
  ASSERT_EQ(files.exit_code, 0) << files.err;
  nlohmann::json again = ReadReportData(dir + "/by-files/data/complexity.js");
  EXPECT_EQ(again["plots"], complexity["plots"]);

  // One run alone has one size: no complexity page.
  RunResult one = Hotline({"html", ProfilesIn(dir + "/poly").front(), "-o", "one"}, dir);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_FALSE(fs::exists(dir + "/one/data/complexity.js"));
  // A directory without profiles: one line, nothing written.
  fs::create_directory(dir + "/empty");
  RunResult empty = Hotline({"html", "empty", "-o", "nothing"}, dir);
  EXPECT_NE(empty.exit_code, 0);
  EXPECT_EQ(Lines(empty.err), 1u) << empty.err;
  EXPECT_NE(empty.err.find("empty"), std::string::npos) << empty.err;
  EXPECT_FALSE(fs::exists(dir + "/nothing"));
  ExpectNoLeftovers(dir);
}

// One profile whose calls were tagged by hotline_size(): a plot per tagged function, every call a
// point (nine per size), each within the range of n fitted. Times only for their structure.
TEST(Html, SizedCallsGetAComplexityPage) {
  std::string dir = ScratchDir("html-sized-calls");
  RunResult rec = Hotline(
      {"record", "-q", "--trace=timed", "-o", "api.hotline", "--", PROGRAM_complexity_prog, "api"},
      dir);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  RunResult html = Hotline({"html", "api.hotline", "-o", "report"}, dir);
  ASSERT_EQ(html.exit_code, 0) << html.err;
  nlohmann::json complexity = ReadReportData(dir + "/report/data/complexity.js");
  for (const char* function : {"linear_scan", "binary_search", "merge_sort", "insertion_sort",
                               "triple_loop", "subset_sums", "hash_lookups"}) {
    nlohmann::json plot = FindPlot(complexity, function, "time/call");
    ASSERT_FALSE(plot.is_null()) << function;
    uint64_t sizes = std::stoull(plot["row"][9].get<std::string>());
    uint64_t from = std::stoull(plot["row"][7].get<std::string>());
    uint64_t to = std::stoull(plot["row"][8].get<std::string>());
    EXPECT_EQ(plot["points"].size(), 9 * sizes) << function;
    EXPECT_EQ(plot["medians"].size(), sizes) << function;
    for (const nlohmann::json& point : plot["points"]) {
      EXPECT_GE(point[0].get<uint64_t>(), from) << function;
      EXPECT_LE(point[0].get<uint64_t>(), to) << function;
    }
    EXPECT_FALSE(plot["counted"].get<bool>()) << function;
  }
  for (const nlohmann::json& plot : complexity["plots"])
    EXPECT_EQ(plot["row"][11], "time/call") << plot["short"];
}

TEST_F(HtmlBrowser, DrawsTheHotFunctionAndOpensItsHotLine) {
  Report r = RecordAndReport("browser", PROGRAM_html_target);
  fs::create_directories(HTML_SCREENSHOT_DIR);
  RunResult run = Browse({"main", r.report, "hot", "cold", "html_target.c", "10",
                          HTML_SCREENSHOT_DIR "/html-report.png"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(fs::exists(HTML_SCREENSHOT_DIR "/html-report.png"));
}

// A source of 30,000 lines (a table, then the loop that reads it): its page opens at the hot
// line with a window of rows around it, not the whole file, and scrolling reaches the end
// (bench/html_source.sh times a 250,000-line one).
TEST_F(HtmlBrowser, ALongSourceDrawsAWindowAroundItsLine) {
  std::string dir = ScratchDir("html-browser-long");
  {
    std::ofstream c(dir + "/long.c");
    c << "static const int table[] = {\n";
    for (int i = 0; i < 30000; ++i) c << "  " << i << ",\n";
    c << "};\n"
         "__attribute__((noinline)) long walk(int rounds) {\n"
         "  long s = 0;\n"
         "  for (int r = 0; r < rounds; ++r)\n"
         "    for (unsigned i = 0; i < sizeof table / sizeof *table; ++i)\n"
         "      s += table[i] ^ r;\n"  // line 30007
         "  return s;\n"
         "}\n"
         "int main(void) { return walk(3000) == 42; }\n";
  }
  RunResult built = Execute({"/usr/bin/gcc", "-O0", "-g", "-o", "long", "long.c"}, dir);
  ASSERT_EQ(built.exit_code, 0) << built.err;
  RunResult recorded = Hotline({"record", "-q", "-o", "p.hotline", "--", dir + "/long"}, dir);
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  RunResult html = Hotline({"html", "p.hotline", "-o", "report"}, dir);
  ASSERT_EQ(html.exit_code, 0) << html.err;
  RunResult run = Browse({"source-timing", dir + "/report", "long.c", "30007"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("source of 30010 lines drawn at line 30007"), std::string::npos)
      << run.out;
}

// 800 traced functions, each called once: every one is in the functions table (which once
// showed the first 500), drawn a window at a time.
TEST_F(HtmlBrowser, TheFunctionsTableHoldsEveryFunction) {
  std::string dir = ScratchDir("html-browser-many");
  {
    std::ofstream c(dir + "/many.c");
    for (int i = 0; i < 800; ++i) c << "int f" << i << "(int x) { return x + " << i << "; }\n";
    c << "int main(void) {\n  int s = 0;\n";
    for (int i = 0; i < 800; ++i) c << "  s += f" << i << "(s);\n";
    c << "  return s == 42;\n}\n";
  }
  RunResult built =
      Execute({"/usr/bin/gcc", "-O0", "-g", "-finstrument-functions", "-o", "many", "many.c"}, dir);
  ASSERT_EQ(built.exit_code, 0) << built.err;
  RunResult recorded = Hotline({"record", "-q", "-o", "p.hotline", "--", dir + "/many"}, dir);
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  RunResult html = Hotline({"html", "p.hotline", "-o", "report"}, dir);
  ASSERT_EQ(html.exit_code, 0) << html.err;
  RunResult run = Browse({"functions-all", dir + "/report", "800"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
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

TEST_F(HtmlBrowser, WatchPageDrawsEachVariable) {
  std::string dir = ScratchDir("html-browser-watch");
  // watch_known exits with 3 on purpose: the profiled program keeps its status.
  RunResult recorded = Hotline({"record", "-q", "-o", "p.hotline", "--watch", "total,paint,ratio",
                                "--", PROGRAM_watch_known},
                               dir);
  ASSERT_EQ(recorded.exit_code, 3) << recorded.err;
  RunResult html = Hotline({"html", "p.hotline", "-o", "report"}, dir);
  ASSERT_EQ(html.exit_code, 0) << html.err;
  RunResult run = Browse({"watches", dir + "/report", "total", "paint", "ratio"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}

TEST_F(HtmlBrowser, ComplexityPageDrawsTheFits) {
  std::string dir = Sweep("browser-complexity");
  RunResult html = Hotline({"html", "poly", "-o", "report"}, dir);
  ASSERT_EQ(html.exit_code, 0) << html.err;
  fs::create_directories(HTML_SCREENSHOT_DIR);
  RunResult run = Browse({"complexity", dir + "/report", "insertion_sort", "lines/run", "O(n^2)",
                          "7", HTML_SCREENSHOT_DIR "/html-complexity.png"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}

}  // namespace
}  // namespace hotline

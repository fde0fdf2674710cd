// Golden files for every table (tests/golden/report_*.txt), from the deterministic profile of
// golden_profile.cc read back from disk and symbolized for real. Set HOTLINE_UPDATE_GOLDEN=1 to
// rewrite them after an intended change, and review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>

#include "format/raw_profile.h"
#include "golden_profile.h"
#include "model/build.h"
#include "model/invariants.h"
#include "report/report.h"
#include "symbolize/symbolizer.h"
#include "test_util.h"
#include "../../symbol_cache_off.h"

namespace hotline {
namespace {

using report::ReportOptions;

struct GoldenCase {
  const char* name;
  std::function<void(ReportOptions&)> set;
  std::optional<uint64_t> thread;
};

// gtest prints a case by its name, not by its bytes.
void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }

class GoldenTest : public ::testing::TestWithParam<GoldenCase> {
 protected:
  static void SetUpTestSuite() {
    unsetenv("DEBUGINFOD_URLS");  // the symbolizer must never go online from a test
    path_ = testing::ScratchDir("golden") + "/golden.hotline";
    std::string error;
    ASSERT_TRUE(testing::WriteGoldenProfile(path_, &error)) << error;
    format::ReadStats stats;
    Expected<format::RawProfile> raw = format::LoadRawProfile(path_, &stats);
    ASSERT_TRUE(raw.ok()) << raw.status().message();
    ASSERT_FALSE(stats.damaged());
    raw_ = new format::RawProfile(std::move(*raw));
  }
  static void TearDownTestSuite() {
    delete raw_;
    raw_ = nullptr;
  }
  static format::RawProfile* raw_;
  static std::string path_;
};

format::RawProfile* GoldenTest::raw_ = nullptr;
std::string GoldenTest::path_;

// The CLI aggregates samples while reading (LoadProfile) unless it needs the records again
// (BuildProfile): both must give the same profile.
TEST_F(GoldenTest, StreamingAndKeptRecordsGiveTheSameTables) {
  ASSERT_NE(raw_, nullptr);
  symbolize::Symbolizer symbolizer;
  model::SymbolizerResolver resolver(symbolizer);
  model::BuildOptions build;
  build.keep_samples = true;
  format::ReadStats stats;
  Expected<model::Profile> streamed = model::LoadProfile(path_, resolver, build, &stats);
  Expected<model::Profile> kept = model::BuildProfile(*raw_, resolver, build);
  ASSERT_TRUE(streamed.ok()) << streamed.status().message();
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  ReportOptions options;
  options.selectAll();
  options.lines = options.functions = options.stack_changes = options.machine = true;
  options.cutoff = 0;
  std::string a, b;
  report::PrintReport(*streamed, options, a);
  report::PrintReport(*kept, options, b);
  EXPECT_EQ(a, b);
  EXPECT_GT(a.size(), 1000u);
}

TEST_P(GoldenTest, MatchesGoldenFile) {
  ASSERT_NE(raw_, nullptr);
  const GoldenCase& c = GetParam();
  ReportOptions options;
  c.set(options);
  symbolize::Symbolizer symbolizer;
  model::SymbolizerResolver resolver(symbolizer);
  model::BuildOptions build;
  build.keep_samples = options.raw || options.stack_changes;
  build.thread = c.thread;
  Expected<model::Profile> profile = model::BuildProfile(*raw_, resolver, build);
  ASSERT_TRUE(profile.ok()) << profile.status().message();
  Status invariants = model::CheckInvariants(*profile);
  EXPECT_TRUE(invariants.ok()) << invariants.message();
  // The fixture's broken stacks (6.5% of its samples) are the one thing it has to say.
  for (const std::string& w : profile->warnings)
    EXPECT_NE(w.find("[broken stack]"), std::string::npos) << w;

  std::string out;
  report::PrintReport(*profile, options, out);
  // People's tables are aligned with spaces; only -m separates columns with TABs.
  if (!options.machine) {
    EXPECT_EQ(out.find('\t'), std::string::npos) << out;
  }
  std::string actual = testing::Normalise(out);
  std::string golden = std::string(HOTLINE_GOLDEN_DIR) + "/report_" + c.name + ".txt";
  if (const char* update = std::getenv("HOTLINE_UPDATE_GOLDEN"); update && *update == '1') {
    testing::WriteFile(golden, actual);
    return;
  }
  std::string expected = testing::ReadFile(golden);
  ASSERT_FALSE(expected.empty()) << "missing golden file " << golden;
  EXPECT_EQ(actual, expected) << "raw output:\n" << out;
}

const GoldenCase kCases[] = {
    {"summary", [](ReportOptions&) {}, {}},
    {"top", [](ReportOptions& o) { o.top = true; }, {}},
    {"top_t3_m", [](ReportOptions& o) { o.top = true, o.top_count = 3, o.machine = true; }, {}},
    {"graph", [](ReportOptions& o) { o.graph = true, o.no_summary = true; }, {}},
    {"graph_m", [](ReportOptions& o) { o.graph = true, o.machine = true; }, {}},
    {"graph_p10", [](ReportOptions& o) { o.graph = true, o.cutoff = 10, o.no_summary = true; }, {}},
    {"files", [](ReportOptions& o) { o.files = true, o.no_summary = true; }, {}},
    {"files_m", [](ReportOptions& o) { o.files = true, o.machine = true; }, {}},
    {"lines", [](ReportOptions& o) { o.lines = true, o.no_summary = true; }, {}},
    {"lines_m", [](ReportOptions& o) { o.lines = true, o.machine = true; }, {}},
    {"flat", [](ReportOptions& o) { o.flat = true, o.no_summary = true; }, {}},
    {"flat_i",
     [](ReportOptions& o) { o.flat = true, o.definitions = true, o.no_summary = true; },
     {}},
    {"functions", [](ReportOptions& o) { o.functions = true, o.no_summary = true; }, {}},
    {"functions_m", [](ReportOptions& o) { o.functions = true, o.machine = true; }, {}},
    {"functions_i",  // texprofile's index: by definition site
     [](ReportOptions& o) { o.functions = true, o.definitions = true, o.no_summary = true; },
     {}},
    {"procedures", [](ReportOptions& o) { o.procedures = true, o.no_summary = true; }, {}},
    {"procedures_m", [](ReportOptions& o) { o.procedures = true, o.machine = true; }, {}},
    {"raw", [](ReportOptions& o) { o.raw = true, o.no_summary = true; }, {}},
    {"raw_s", [](ReportOptions& o) { o.raw = o.stack_changes = true, o.no_summary = true; }, {}},
    {"raw_s_m", [](ReportOptions& o) { o.stack_changes = true, o.machine = true; }, {}},
    {"all", [](ReportOptions& o) { o.selectAll(); }, {}},
    {"all_m", [](ReportOptions& o) { o.selectAll(), o.machine = true; }, {}},
    {"thread_101", [](ReportOptions& o) { o.flat = o.graph = true; }, 101},
    {"thread_101_m", [](ReportOptions& o) { o.flat = true, o.machine = true; }, 101},
};

INSTANTIATE_TEST_SUITE_P(Tables, GoldenTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace hotline

// The flat table (-C) and the top lines (-T) on a hand-made Profile: the default report's short
// flat table, which counts what it leaves out, and each top line's function.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "model/profile.h"
#include "report/report.h"

namespace hotline::report {
namespace {

// 25 functions f0 .. f24 with 25, 24, ..., 1 ns of self time; f0's and f1's on line 7 of a.c,
// the others' on their own lines.
model::Profile ManyFunctions() {
  model::Profile p;
  p.files = {{.path = "a.c"}};
  p.lines.push_back({.file = model::FileId(0u), .line = 7});
  for (uint32_t i = 0; i < 25; ++i) {
    model::Function& f = p.functions.emplace_back();
    f.name = "f" + std::to_string(i);
    f.self_ns = f.inclusive_ns = 25 - i;
    p.summary.total_ns += f.self_ns;
    if (i >= 2) p.lines.push_back({.file = model::FileId(0u), .line = 100 + i});
    model::LineId line(i < 2 ? 0u : static_cast<uint32_t>(p.lines.size() - 1));
    p.lines[line.index()].time_ns += f.self_ns;
    p.function_lines.push_back({model::FunctionId(i), line, f.self_ns, f.self_ns});
  }
  return p;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Flat, TheDefaultReportShowsTwentyAndCountsTheRest) {
  model::Profile p = ManyFunctions();
  ReportOptions options;
  options.flat = true;
  options.flat_limit = 20;
  std::string out;
  PrintFlat(p, options, out);
  EXPECT_NE(out.find("  f19\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("  f20\n"), std::string::npos) << out;
  // f20 .. f24: 5 + 4 + 3 + 2 + 1 = 15 ns of 325.
  EXPECT_NE(out.find("... and 5 more functions with 4.62% of the time"), std::string::npos) << out;

  std::string all;
  options.flat_limit = 0;  // -C
  PrintFlat(p, options, all);
  EXPECT_NE(all.find("  f24\n"), std::string::npos) << all;
  EXPECT_EQ(all.find("more function"), std::string::npos) << all;
  options.machine = true;
  options.flat_limit = 20;
  std::string machine;
  PrintFlat(p, options, machine);
  EXPECT_EQ(Count(machine, "\n"), 20u) << machine;  // no note in machine-readable output
}

TEST(TopLines, EachLineNamesTheFunctionWithMostOfItsTime) {
  model::Profile p = ManyFunctions();
  ReportOptions options;
  options.top = true;
  options.machine = true;
  std::string out;
  PrintTopLines(p, options, out);
  // Line 7 holds f0 (25 ns) and f1 (24 ns): f0's.
  EXPECT_NE(out.find("\t7\t"), std::string::npos) << out;
  EXPECT_NE(out.find("\tf0\ta.c\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("\tf1\t"), std::string::npos) << out;
  EXPECT_NE(out.find("\tf2\ta.c\n"), std::string::npos) << out;
}

}  // namespace
}  // namespace hotline::report

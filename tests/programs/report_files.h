// Reading HTML reports back in tests (html_test, html_diff_test, html_unit_test): the data each
// data file assigns to window.HOTLINE[key] (src/html/script.cc), and headless Chromium over a
// report (tests/browser/report_test.js).
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness.h"

namespace hotline::testing {

// The JSON value the data script at `path` assigns; a failed test and null when it is not one.
nlohmann::json ReadReportData(const std::string& path);

// The lines of `text`.
size_t Lines(const std::string& text);

// Nothing named `.NAME.tmp-*` left beside a report in `dir`.
void ExpectNoLeftovers(const std::string& dir);

// Headless Chromium over real reports. Skips, saying why, only when node, npm or chromium is
// missing or puppeteer-core cannot be installed.
class HtmlBrowser : public ::testing::Test {
 protected:
  void SetUp() override;
  // Runs report_test.js with `args`.
  RunResult Browse(const std::vector<std::string>& args);
};

}  // namespace hotline::testing

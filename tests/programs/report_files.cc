#include "report_files.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace hotline::testing {

nlohmann::json ReadReportData(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  const std::string script = text.str();
  const std::string prefix = "(window.HOTLINE = window.HOTLINE || {})[";
  size_t value = script.find("] = ");
  if (!script.starts_with(prefix) || value == std::string::npos || !script.ends_with(";\n")) {
    ADD_FAILURE() << path << " is not a data script";
    return nullptr;
  }
  value += 4;
  return nlohmann::json::parse(script.substr(value, script.size() - 2 - value), nullptr, false);
}

size_t Lines(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

void ExpectNoLeftovers(const std::string& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
}

void HtmlBrowser::SetUp() {
  RunResult install = Execute({"/bin/bash", HTML_BROWSER_DIR "/install.sh", HTML_NODE_DIR}, ".");
  if (install.exit_code == 77) GTEST_SKIP() << install.err;
  ASSERT_EQ(install.exit_code, 0) << install.err;
}

RunResult HtmlBrowser::Browse(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/env", "NODE_PATH=" HTML_NODE_DIR "/node_modules",
                                   "node", HTML_BROWSER_DIR "/report_test.js"};
  argv.insert(argv.end(), args.begin(), args.end());
  return Execute(argv, ".");
}

}  // namespace hotline::testing

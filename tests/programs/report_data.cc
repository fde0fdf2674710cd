#include "report_data.h"

#include <gtest/gtest.h>

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

}  // namespace hotline::testing

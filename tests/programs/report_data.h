// Reading an HTML report's data back in tests: each data file is a script that assigns one JSON
// value to window.HOTLINE[key] (src/html/script.cc).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace hotline::testing {

// The JSON value the data script at `path` assigns; a failed test and null when it is not one.
nlohmann::json ReadReportData(const std::string& path);

}  // namespace hotline::testing

// texprofile's tables as pages, for people who know them: each printed by report::PrintReport
// exactly as `hotline report` prints it, one file per table.
#include <string>

#include "html/parts.h"
#include "report/report.h"

namespace hotline::html {
namespace {

struct Table {
  const char* flag;
  const char* title;
  bool report::ReportOptions::*option;
};

constexpr Table kTables[] = {
    {"T", "-T top lines", &report::ReportOptions::top},
    {"G", "-G call graph", &report::ReportOptions::graph},
    {"F", "-F files", &report::ReportOptions::files},
    {"L", "-L lines", &report::ReportOptions::lines},
    {"C", "-C flat", &report::ReportOptions::flat},
    {"M", "-M functions", &report::ReportOptions::functions},
    {"P", "-P procedures", &report::ReportOptions::procedures},
};

}  // namespace

void AddTables(const model::Profile& p, nlohmann::json& data, ReportFiles& files) {
  nlohmann::json list = nlohmann::json::array();
  for (const Table& t : kTables) {
    report::ReportOptions options;
    options.*t.option = true;
    options.no_summary = true;
    std::string text;
    report::PrintReport(p, options, text);
    std::string key = std::string("table-") + t.flag;
    files["data/" + key + ".js"] = DataScript(key, text);
    list.push_back({{"flag", t.flag}, {"title", t.title}, {"key", key}});
  }
  data["tables"] = std::move(list);
}

}  // namespace hotline::html

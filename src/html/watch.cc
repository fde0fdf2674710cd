// The watched variables' page data: per variable its figures (writes, reads, range, distinct
// values), the most frequent values, the writing lines and its values over time.
#include "html/parts.h"

namespace hotline::html {

void AddWatches(const model::WatchProfile& w, nlohmann::json& data) {
  nlohmann::json variables = nlohmann::json::array();
  for (const model::WatchedVariable& v : w.variables) {
    nlohmann::json values = nlohmann::json::array();
    for (const model::WatchValue& value : v.top_values)
      values.push_back({value.text, value.writes});
    nlohmann::json lines = nlohmann::json::array();
    for (const model::WatchLine& line : v.lines)
      lines.push_back({{"function", line.function},
                       {"file", line.file},
                       {"line", line.line},
                       {"writes", line.writes}});
    nlohmann::json timeline = nlohmann::json::array();
    for (const model::WatchPoint& point : v.timeline)
      timeline.push_back({point.time_ns, point.value});
    variables.push_back({{"name", v.name},
                         {"type", v.type_name},
                         {"from_api", v.from_api},
                         {"writes", v.writes},
                         {"reads_counted", v.reads_counted},
                         {"reads", v.reads},
                         {"lost", v.lost},
                         {"min", v.writes ? v.min.text : ""},
                         {"max", v.writes ? v.max.text : ""},
                         {"distinct", v.distinct},
                         {"values", std::move(values)},
                         {"lines", std::move(lines)},
                         {"timeline", std::move(timeline)}});
  }
  data["watches"] = {{"variables", std::move(variables)}, {"notes", w.notes}};
}

}  // namespace hotline::html

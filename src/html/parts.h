// The parts of the HTML report, each writing the data of one view. Internal to src/html.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "html/html.h"

namespace hotline::html {

// The report's files by relative path, as they will be written.
using ReportFiles = std::map<std::string, std::string>;

// Writes `files` and the report's assets into `dir`, as WriteHtmlReport promises for every page
// hotline writes: built in a fresh directory beside `dir`, renamed into place when complete (a
// failure leaves nothing behind), an earlier report in `dir` replaced, any other non-empty `dir`
// refused. Errors name the directory and the reason.
Status WriteReport(ReportFiles files, const std::string& dir);

// A script that stores `value` as HOTLINE[key]: the data survives file:// (where fetching JSON is
// refused) and no string in it can end the script or start markup.
std::string DataScript(std::string_view key, const nlohmann::json& value);

// Flame graph frames narrower than this share of their graph are left out with their subtrees:
// on any screen they would be under a pixel wide, and their time still shows in their parents'.
inline constexpr double kFlameMinShare = 1.0 / 20000;

// Program, duration, threads, samples, warnings, the summary; the functions (their call-graph
// edges in a file of their own). Into data["..."] of data.js.
void AddOverview(const HtmlInput& input, nlohmann::json& data);
void AddFunctions(const model::Profile& profile, nlohmann::json& data, ReportFiles& files);
// Flame graphs: one file per thread and order; their names into data["flames"].
void AddFlameGraphs(const model::Profile& profile, nlohmann::json& data, ReportFiles& files);
// One file per source with data; each file's source (or that it is missing) into data["files"].
void AddSources(const HtmlInput& input, nlohmann::json& data, ReportFiles& files);
void AddHeap(const model::HeapProfile& heap, nlohmann::json& data);
// Watched variables: each one's figures, values, lines and value timeline into data["watches"].
void AddWatches(const model::WatchProfile& watches, nlohmann::json& data);
// Timed traces: each thread's calls in a file of its own; the threads into data["timeline"].
void AddTimeline(const model::Profile& profile, nlohmann::json& data, ReportFiles& files);
// Complexity: per function and measure its points, fitted curves and -X row, in a file of its
// own; how many into data["complexity"].
void AddComplexity(const std::vector<analysis::FunctionComplexity>& fits, nlohmann::json& data,
                   ReportFiles& files);
// texprofile's tables as text, one file each; their names into data["tables"].
void AddTables(const model::Profile& profile, nlohmann::json& data, ReportFiles& files);

}  // namespace hotline::html

// The history page's data: the commits (oldest first) with what a person needs to tell them
// apart, and each series' values per commit as [runs, mean, min, max] in whole nanoseconds (null
// where the commit has no runs), with the label of the change it marks. The page draws the charts.
#include "html/history.h"

#include <fmt/format.h>
#include <time.h>

#include <cmath>

#include "html/parts.h"
#include "report/names.h"

namespace hotline::html {
namespace {

constexpr size_t kShortHash = 7;

std::string ShortHash(const std::string& commit) { return commit.substr(0, kShortHash); }

// "2026-11-23 11:29 UTC"; empty when unknown.
std::string Date(int64_t time_unix) {
  if (time_unix <= 0) return "";
  time_t t = static_cast<time_t>(time_unix);
  tm parts{};
  if (!gmtime_r(&t, &parts)) return "";
  char text[32];
  size_t n = strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", &parts);
  return std::string(text, n);
}

// "+21% from a1b2c3d": one decimal below 10%, where it still says something.
std::string ChangeLabel(double change, const std::string& commit) {
  double percent = 100 * change;
  return std::fabs(percent) < 10 ? fmt::format("{:+.1f}% from {}", percent, ShortHash(commit))
                                 : fmt::format("{:+.0f}% from {}", percent, ShortHash(commit));
}

Status Check(const HistoryInput& input) {
  for (const HistorySeries& s : input.series) {
    if (s.values.size() != input.commits.size())
      return Status::Error(fmt::format("history series {}: {} values for {} commits", s.name,
                                       s.values.size(), input.commits.size()));
    if (s.change_at && *s.change_at >= input.commits.size())
      return Status::Error(fmt::format("history series {}: its change is at commit {} of {}",
                                       s.name, *s.change_at, input.commits.size()));
  }
  return Status();
}

}  // namespace

Status WriteHistoryReport(const HistoryInput& input, const std::string& dir) {
  if (Status s = Check(input); !s.ok()) return s;
  nlohmann::json commits = nlohmann::json::array();
  for (const HistoryCommit& c : input.commits)
    commits.push_back({{"commit", c.commit},
                       {"short", ShortHash(c.commit)},
                       {"subject", c.subject},
                       {"branch", c.branch},
                       {"date", Date(c.time_unix)},
                       {"dirty", c.dirty}});
  nlohmann::json series = nlohmann::json::array();
  for (const HistorySeries& s : input.series) {
    nlohmann::json values = nlohmann::json::array();
    for (const std::optional<HistoryValue>& v : s.values) {
      if (!v || v->runs == 0) {
        values.push_back(nullptr);
        continue;
      }
      values.push_back(
          {v->runs, std::llround(v->mean_ns), std::llround(v->min_ns), std::llround(v->max_ns)});
    }
    nlohmann::json entry = {{"name", s.name},
                            {"short", s.file.empty() ? s.name : report::ShortName(s.name, false)},
                            {"file", s.file},
                            {"self", s.self},
                            {"values", std::move(values)},
                            {"change_at", nullptr},
                            {"label", ""}};
    if (s.change_at) {
      entry["change_at"] = *s.change_at;
      entry["change"] = s.change;
      entry["label"] = ChangeLabel(s.change, input.commits[*s.change_at].commit);
    }
    series.push_back(std::move(entry));
  }
  nlohmann::json data;
  data["history"] = {{"database", input.database},
                     {"workload", input.workload},
                     {"commits", std::move(commits)},
                     {"series", std::move(series)}};
  ReportFiles files;
  files["data/data.js"] = DataScript("data", data);
  return WriteReport(std::move(files), dir);
}

}  // namespace hotline::html

// The overview page's data: what ran, for how long, on which threads, what went wrong, and the
// summary as `hotline report` prints it.
#include <string>

#include "html/parts.h"
#include "report/report.h"

namespace hotline::html {

void AddOverview(const HtmlInput& input, nlohmann::json& data) {
  const model::Profile& p = *input.profile;
  const model::Summary& s = p.summary;
  data["program"] = s.exe;
  data["argv"] = s.argv;
  data["profile"] = input.profile_path;
  data["total_ns"] = s.total_ns;
  data["duration_ns"] = s.last_time > s.first_time ? s.last_time - s.first_time : 0;
  data["samples"] = s.samples;
  data["clock"] = s.clock == format::ClockMode::kWall ? "elapsed" : "CPU";
  data["sampler"] = report::SamplerName(s.sampler);
  data["ended"] = report::DescribeEnding(p);
  data["exact_line_counts"] = s.exact_line_counts;
  data["traced"] = s.traced;
  nlohmann::json threads = nlohmann::json::array();
  for (const model::Thread& t : p.threads)
    threads.push_back({{"tid", t.tid},
                       {"name", t.name},
                       {"time_ns", t.time_ns},
                       {"samples", t.samples},
                       {"unsampled_ns", t.unsampled_ns}});
  data["threads"] = std::move(threads);
  nlohmann::json warnings = input.warnings;
  for (const std::string& w : p.warnings) warnings.push_back(w);
  data["warnings"] = std::move(warnings);
  data["notes"] = p.notes;
  nlohmann::json marks = nlohmann::json::array();
  for (const model::Mark& m : p.marks)
    marks.push_back({{"time", m.time}, {"tid", m.tid}, {"label", m.label}});
  data["marks"] = std::move(marks);
  std::string summary;
  report::ReportOptions options;
  report::PrintSummary(p, options, summary);
  data["summary_text"] = summary;
}

}  // namespace hotline::html

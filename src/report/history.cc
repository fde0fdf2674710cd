#include "report/history.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cmath>

#include "report/names.h"
#include "report/text.h"

namespace hotline::report {
namespace {

std::string Time(double ns) { return FormatTime(static_cast<uint64_t>(std::llround(ns)), false); }

std::string Short(const std::string& commit) { return commit.substr(0, 8); }

std::string Date(int64_t unix_seconds) {
  time_t t = static_cast<time_t>(unix_seconds);
  struct tm local;
  localtime_r(&t, &local);
  char text[32];
  strftime(text, sizeof text, "%Y-%m-%d %H:%M", &local);
  return text;
}

// ▁▂▃▄▅▆▇█ from the lowest mean to the highest; a space where a commit has no runs.
std::string Sparkline(const history::Series& s) {
  static const char* const kBars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  double low = INFINITY, high = -INFINITY;
  for (const auto& p : s.points)
    if (p) low = std::min(low, p->mean_ns), high = std::max(high, p->mean_ns);
  std::string line;
  for (const auto& p : s.points) {
    if (!p) {
      line += ' ';
      continue;
    }
    int bar = high > low ? static_cast<int>(std::lround(7 * (p->mean_ns - low) / (high - low))) : 0;
    line += kBars[bar];
  }
  return line;
}

std::string SeriesName(const history::Series& s, const ReportOptions& options) {
  if (s.name == "total") return "total";
  return fmt::format("{} {}", options.full_names ? s.name : ShortName(s.name, false),
                     s.self ? "self" : "inclusive");
}

std::string Cell(const std::optional<history::Point>& p) {
  if (!p) return "-";
  if (p->runs < 2) return Time(p->mean_ns);
  return fmt::format("{} ±{:.1f}%", Time(p->mean_ns), 100 * p->sd_ns / p->mean_ns);
}

}  // namespace

void PrintHistoryLog(const HistoryLog& log, const ReportOptions& options, std::string& out) {
  size_t shown = std::min(log.max_commits, log.commits.size());
  size_t first = log.commits.size() - shown;
  const history::Series& marked = log.series.back();
  TableWriter w(options, out);
  if (!options.machine) {
    out += fmt::format("Workload {} in {}: {} commit{} with runs, newest first{}\n", log.workload,
                       log.database, log.commits.size(), log.commits.size() == 1 ? "" : "s",
                       shown < log.commits.size() ? fmt::format(" (the {} newest)", shown) : "");
    out +=
        "Times are the mean per run ± the runs' standard deviation; * marks a commit whose "
        "tree had\nchanges not committed when some run was added.\n\n";
  }
  std::vector<std::string> header = {"commit", "date", "runs"};
  for (const history::Series& s : log.series) header.push_back(SeriesName(s, options));
  header.push_back("change");
  header.push_back("subject");
  w.header(std::vector<std::string_view>(header.begin(), header.end()));
  for (size_t i = log.commits.size(); i-- > first;) {
    const history::CommitRuns& c = log.commits[i];
    bool dirty = std::any_of(c.runs.begin(), c.runs.end(),
                             [](const history::RunRecord* r) { return r->dirty; });
    std::string change;
    for (const history::Step& step : marked.steps)
      if (step.at == i)
        change = options.machine
                     ? fmt::format("{:.6f}", step.change)
                     : fmt::format("{} {} from here ({} … {})", step.change > 0 ? "▲" : "▼",
                                   FormatChange(step.change), FormatChange(step.low),
                                   FormatChange(step.high));
    std::vector<std::string> cells;
    cells.push_back(options.machine ? c.commit : Short(c.commit) + (dirty ? "*" : ""));
    cells.push_back(options.machine ? std::to_string(c.runs.back()->added_at)
                                    : Date(c.runs.back()->added_at));
    cells.push_back(std::to_string(c.runs.size()));
    for (const history::Series& s : log.series) {
      const auto& p = s.points[i];
      cells.push_back(options.machine ? (p ? fmt::format("{:.0f}", p->mean_ns) : "") : Cell(p));
    }
    cells.push_back(change);
    cells.push_back(i < log.subjects.size() ? log.subjects[i] : "");
    w.row(std::vector<std::string_view>(cells.begin(), cells.end()));
  }
  w.flush();
  if (options.machine) return;
  out += "\n";
  size_t width = 0;
  for (const history::Series& s : log.series)
    width = std::max(width, SeriesName(s, options).size());
  for (const history::Series& s : log.series)
    out += fmt::format("{:<{}}  {}   (oldest → newest)\n", SeriesName(s, options), width,
                       Sparkline(s));
}

void PrintCheck(const CheckReport& check, CheckFormat format, const ReportOptions& options,
                std::string& out) {
  const history::CheckResult& r = check.result;
  auto name = [&options](const history::CheckRow& row) {
    return options.full_names ? row.name : ShortName(row.name, false);
  };
  size_t slower = 0, faster = 0, maybe = 0;
  for (const history::CheckRow& row : r.rows) {
    slower += row.grade == history::Grade::kSlower || row.grade == history::Grade::kMuchSlower;
    faster += row.grade == history::Grade::kFaster;
    maybe += row.grade == history::Grade::kMaybe;
  }
  std::string verdict = r.Slower()
                            ? fmt::format("slower: {} function{} slower beyond {:g}%{}", slower,
                                          slower == 1 ? "" : "s", 100 * r.threshold,
                                          r.total.grade == history::Grade::kSlower ||
                                                  r.total.grade == history::Grade::kMuchSlower
                                              ? ", and the total"
                                              : "")
                            : fmt::format("no function slower beyond {:g}%", 100 * r.threshold);
  std::string against =
      fmt::format("{} ({} run{}) against {} {} ({} run{})", Short(check.commit), r.new_runs,
                  r.new_runs == 1 ? "" : "s",
                  check.baseline_named ? "baseline" : "its nearest ancestor with runs,",
                  Short(check.baseline), r.base_runs, r.base_runs == 1 ? "" : "s");
  // Lost samples shrink every function's time and are never judged: say when they are many.
  std::string unsampled;
  if (r.new_unsampled_ns * 20 > r.total.new_ns)
    unsampled = fmt::format(
        "Not judged: [unsampled], {} per new run ({:.1f}% of its CPU time; {} before), the CPU\n"
        "time no sample reached, as when a loaded machine's kernel drops samples. It counts in\n"
        "the total only.\n",
        Time(r.new_unsampled_ns), 100 * r.new_unsampled_ns / r.total.new_ns,
        Time(r.base_unsampled_ns));
  auto interval = [](const history::CheckRow& row) {
    return FormatChange(row.low) + " … " + FormatChange(row.high);
  };
  if (format == CheckFormat::kMarkdown) {
    out += fmt::format("### hotline check: {} {}\n\n", r.Slower() ? "⚠️" : "✅", verdict);
    out += fmt::format("Workload `{}`: {}. Total {} → {} ({}, {} at {:g}% confidence).\n\n",
                       check.workload, against, Time(r.total.base_ns), Time(r.total.new_ns),
                       FormatChange(r.total.new_ns / r.total.base_ns - 1),
                       history::GradeName(r.total.grade), 100 * r.confidence);
    if (!r.rows.empty()) {
      out += "| grade | function | change | interval | before | after |\n";
      out += "|---|---|---:|---|---:|---:|\n";
      for (const history::CheckRow& row : r.rows) {
        std::string escaped;
        for (char c : name(row)) escaped += c == '|' ? "\\|" : std::string(1, c);
        out += fmt::format("| {} | `{}` | {} | {} | {} | {} |\n", history::GradeName(row.grade),
                           escaped, FormatChange(row.new_ns / row.base_ns - 1), interval(row),
                           Time(row.base_ns), Time(row.new_ns));
      }
      out += "\n";
    }
    out += fmt::format(
        "{} functions judged, self time, {:g}% confidence for all of them together; "
        "a grade needs the whole interval beyond ±{:g}%.\n",
        r.judged, 100 * r.confidence, 100 * r.threshold);
    out += unsampled;
    return;
  }
  TableWriter w(options, out);
  if (!options.machine) {
    out += fmt::format("Workload {}: {}\n", check.workload, against);
    out += fmt::format(
        "{} functions judged by self time at {:g}% confidence for all together; threshold "
        "{:g}%.\n\n",
        r.judged, 100 * r.confidence, 100 * r.threshold);
  }
  w.header({"grade", "change", "interval", "before", "after", "name"});
  for (const history::CheckRow* row : [&] {
         std::vector<const history::CheckRow*> rows = {&r.total};
         for (const history::CheckRow& x : r.rows) rows.push_back(&x);
         return rows;
       }()) {
    bool total = row == &r.total;
    if (options.machine)
      w.row({history::GradeName(row->grade), fmt::format("{:.6f}", row->new_ns / row->base_ns - 1),
             fmt::format("{:.6f}", row->low), fmt::format("{:.6f}", row->high),
             fmt::format("{:.0f}", row->base_ns), fmt::format("{:.0f}", row->new_ns),
             total ? "[total]" : row->name});
    else
      w.row({history::GradeName(row->grade), FormatChange(row->new_ns / row->base_ns - 1),
             interval(*row), Time(row->base_ns), Time(row->new_ns),
             total ? "(total)" : name(*row)});
  }
  w.flush();
  if (!options.machine) out += fmt::format("\nVerdict: {}.\n", verdict) + unsampled;
}

}  // namespace hotline::report

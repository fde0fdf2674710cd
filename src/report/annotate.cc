#include "report/annotate.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "report/sources.h"
#include "report/text.h"

namespace hotline::report {
namespace {

namespace fs = std::filesystem;

// Heat by share of the total: the hottest lines stand out in red.

bool Wanted(const std::string& path, const AnnotateOptions& options) {
  if (options.sources.empty()) return true;
  for (const std::string& s : options.sources)
    if (SourceMatches(path, s)) return true;
  return false;
}

std::string Ranges(const std::vector<uint32_t>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size();) {
    size_t j = i;
    while (j + 1 < lines.size() && lines[j + 1] == lines[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += lines[i] == lines[j] ? fmt::format("{}", lines[i])
                                : fmt::format("{}-{}", lines[i], lines[j]);
    i = j + 1;
  }
  return out;
}

// The index by time: functions and files that cost at least the cutoff.
void PrintTimeIndex(const model::Profile& p, const AnnotateOptions& options, std::string& out) {
  auto pct = [&](uint64_t ns) { return p.percentOfTotal(ns); };
  out += fmt::format("Index (explicit = self, implicit = inclusive; at least {}% of the total)\n",
                     FormatPercent(options.cutoff));
  out += "explicit\t%\timplicit\t%\tcalls\tfunction\n";
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < p.functions.size(); ++i)
    if (pct(p.functions[i].inclusive_ns) >= options.cutoff && p.functions[i].inclusive_ns > 0)
      order.push_back(i);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return p.functions[a].inclusive_ns > p.functions[b].inclusive_ns;
  });
  for (uint32_t i : order) {
    const model::Function& f = p.functions[i];
    out +=
        fmt::format("{}\t{}\t{}\t{}\t{}{}\t{}\n", FormatTime(f.self_ns, false),
                    FormatPercent(pct(f.self_ns)), FormatTime(f.inclusive_ns, false),
                    FormatPercent(pct(f.inclusive_ns)), f.calls, f.calls_exact ? "" : "~", f.name);
  }
  out += "\ntime\t%\tfile\n";
  for (const model::File& f : p.files)
    if (f.time_ns > 0 && pct(f.time_ns) >= options.cutoff)
      out += fmt::format("{}\t{}\t{}\n", FormatTime(f.time_ns, false),
                         FormatPercent(pct(f.time_ns)), f.path);
}

// The index by Knuth's cost (counts × instructions, no timing in the profile).
void PrintCostIndex(const model::CostModel& costs, const AnnotateOptions& options,
                    std::string& out) {
  out += fmt::format(
      "Index by cost = executions × instructions (explicit = own lines, implicit = with callees, "
      "from the call graph's linear system; at least {}% of {:.0f} instructions)\n",
      FormatPercent(options.cutoff), costs.total);
  out += "explicit\t%\timplicit\t%\tcalls\tfunction\n";
  for (const model::FunctionCost& c : costs.functions) {
    double explicit_pct = costs.total > 0 ? 100.0 * c.explicit_cost / costs.total : 0;
    double implicit_pct = costs.total > 0 ? 100.0 * c.implicit_cost / costs.total : 0;
    if (implicit_pct < options.cutoff) continue;
    std::string cycle = c.cycle >= 0 ? fmt::format(" <cycle {}>", c.cycle + 1) : "";
    out += fmt::format("{:.0f}\t{}\t{:.0f}\t{}\t{}\t{}{}\n", c.explicit_cost,
                       FormatPercent(explicit_pct), c.implicit_cost, FormatPercent(implicit_pct),
                       c.calls, c.name, cycle);
  }
}

}  // namespace

void PrintAnnotated(const model::Profile& p, const AnnotateOptions& options, std::string& out,
                    std::vector<std::string>& notes) {
  // Lines by file, functions by definition file.
  std::map<uint32_t, std::map<uint32_t, const model::Line*>> lines_of;
  for (const model::Line& l : p.lines)
    if (l.line > 0 && p.file(l.file).pseudo == model::PseudoKind::kNone)
      lines_of[l.file.index()][l.line] = &l;
  std::map<uint32_t, std::multimap<uint32_t, uint32_t>> functions_of;  // file → line → function
  for (uint32_t i = 0; i < p.functions.size(); ++i) {
    const model::Function& f = p.functions[i];
    if (f.file.valid() && f.line > 0 && f.pseudo == model::PseudoKind::kNone)
      functions_of[f.file.index()].emplace(f.line, i);
  }

  if (options.machine) {
    for (const auto& [file, lines] : lines_of) {
      if (!Wanted(p.file(model::FileId(file)).path, options)) continue;
      for (const auto& [number, l] : lines) {
        bool known = l->count_exact || !p.summary.exact_line_counts;
        out += fmt::format("{}\t{}\t{}\t{}\n", p.file(l->file).path, number,
                           known ? fmt::format("{}", l->count) : "", l->time_ns);
      }
    }
    return;
  }

  auto pct = [&](uint64_t ns) { return p.percentOfTotal(ns); };
  if (options.costs) {
    PrintCostIndex(*options.costs, options, out);
  } else {
    PrintTimeIndex(p, options, out);
  }
  auto cost_of = [&](const model::Line& l) -> double {
    auto w = options.weights.find({p.file(l.file).path, l.line});
    return w == options.weights.end() ? 0.0 : double(l.count) * w->second;
  };
  auto cost_pct = [&](double cost) {
    return options.costs && options.costs->total > 0 ? 100.0 * cost / options.costs->total : 0.0;
  };
  std::map<std::string, const model::FunctionCost*> cost_by_name;
  if (options.costs)
    for (const model::FunctionCost& c : options.costs->functions) cost_by_name[c.name] = &c;
  std::vector<std::string> never;  // "file: ranges"
  for (const auto& [file, lines] : lines_of) {
    const std::string& path = p.file(model::FileId(file)).path;
    if (!Wanted(path, options)) continue;
    std::string found = FindSource(path, options.source_dirs);
    std::vector<uint32_t> never_here;
    for (const auto& [number, l] : lines)
      if (l->count_exact && l->count == 0) never_here.push_back(number);
    if (!never_here.empty()) never.push_back(path + ": " + Ranges(never_here));
    if (found.empty()) {
      notes.push_back(fmt::format("cannot find the source {} (use --source-dir DIR)", path));
      continue;
    }
    std::vector<std::string> text = ReadSourceLines(found);
    out += fmt::format("\n{}\n", found);
    out += fmt::format("{:>12}  {:>10}  {:>10}  {:>6}  source\n", "count",
                       options.costs ? "cost" : "time", options.costs ? "" : "average", "%");
    const auto& functions = functions_of[file];
    for (uint32_t number = 1; number <= text.size(); ++number) {
      for (auto [it, end] = functions.equal_range(number); it != end; ++it) {
        const model::Function& f = p.functions[it->second];
        if (auto c = cost_by_name.find(f.name); c != cost_by_name.end()) {
          out += fmt::format(
              "{:>12}  -- {}: explicit {:.0f} ({}%), implicit {:.0f} ({}%), calls {}\n", "", f.name,
              c->second->explicit_cost, FormatPercent(cost_pct(c->second->explicit_cost)),
              c->second->implicit_cost, FormatPercent(cost_pct(c->second->implicit_cost)),
              c->second->calls);
          continue;
        }
        out +=
            fmt::format("{:>12}  {} {}: explicit {} ({}%), implicit {} ({}%), calls {}{}\n", "",
                        "--", f.name, FormatTime(f.self_ns, false), FormatPercent(pct(f.self_ns)),
                        FormatTime(f.inclusive_ns, false), FormatPercent(pct(f.inclusive_ns)),
                        f.calls, f.calls_exact ? "" : " (estimated)");
      }
      auto it = lines.find(number);
      std::string left;
      double share = 0;
      if (it == lines.end()) {
        left = fmt::format("{:>12}  {:>10}  {:>10}  {:>6}", "", "", "", "");
      } else {
        const model::Line& l = *it->second;
        share = pct(l.time_ns);
        std::string count = l.count_exact && l.count == 0 ? "#####"
                            : l.count_exact               ? fmt::format("{}", l.count)
                                                          : fmt::format("~{}", l.count);
        std::string average = l.count ? FormatTime(l.time_ns / l.count, false) : "";
        if (options.costs) {
          double cost = cost_of(l);
          share = cost_pct(cost);
          left = fmt::format("{:>12}  {:>10}  {:>10}  {:>6}", count,
                             cost > 0 ? fmt::format("{:.0f}", cost) : "", "",
                             cost > 0 ? FormatPercent(share) : "");
        } else {
          left = fmt::format("{:>12}  {:>10}  {:>10}  {:>6}", count,
                             l.time_ns ? FormatTime(l.time_ns, false) : "",
                             l.time_ns ? average : "", l.time_ns ? FormatPercent(share) : "");
        }
      }
      const char* color = options.color ? HeatColor(share) : "";
      bool never_ran = it != lines.end() && it->second->count_exact && it->second->count == 0;
      if (options.color && never_ran) color = "\x1b[35m";
      out += fmt::format("{}{}{}  {}\n", color, left, *color ? kColorReset : "", text[number - 1]);
    }
  }

  out += "\nNever executed\n";
  if (!p.summary.exact_line_counts) {
    out += "(no exact counts in this profile: record a --coverage build to list them)\n";
  } else if (never.empty()) {
    out += "(none: every executable line ran)\n";
  } else {
    for (const std::string& n : never) out += n + "\n";
  }
}

}  // namespace hotline::report

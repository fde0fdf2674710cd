#include "report/annotate.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>

#include "model/system_code.h"
#include "report/names.h"
#include "report/sources.h"
#include "report/text.h"

namespace hotline::report {
namespace {

// Lines shown around a hot line when the listing is folded.
constexpr uint32_t kContext = 2;

bool Asked(const std::string& path, const AnnotateOptions& options) {
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

// The modules whose code comes from each file: the functions defined there and every frame of
// the sampled stacks at one of its lines.
std::map<uint32_t, std::set<uint32_t>> ModulesOfFiles(const model::Profile& p) {
  std::map<uint32_t, std::set<uint32_t>> modules;
  for (const model::Function& f : p.functions)
    if (f.file.valid() && f.module.valid()) modules[f.file.index()].insert(f.module.index());
  for (const model::StackFrame& frame : p.stack_frames) {
    const model::Function& f = p.function(frame.function);
    if (f.module.valid()) modules[p.line(frame.line).file.index()].insert(f.module.index());
  }
  return modules;
}

// A file of the system: a header or source under /usr, or a relative path (libc's
// `libio/genops.c`) all of whose code is in system libraries.
bool SystemFile(const model::Profile& p, const std::string& path,
                const std::set<uint32_t>& modules) {
  if (model::IsSystemSource(path)) return true;
  if (path.starts_with('/') || modules.empty()) return false;
  return std::all_of(modules.begin(), modules.end(),
                     [&](uint32_t m) { return model::IsSystemModule(p.modules[m].path); });
}

// The newest of the modules built from a file, to tell a source edited since: empty when none
// is on disk or the source is older.
std::string NewerThanItsBinary(const model::Profile& p, const std::string& source,
                               const std::set<uint32_t>& modules) {
  struct stat source_stat;
  if (stat(source.c_str(), &source_stat) != 0) return {};
  for (uint32_t m : modules) {
    struct stat binary;
    if (stat(p.modules[m].path.c_str(), &binary) != 0) continue;
    if (source_stat.st_mtim.tv_sec > binary.st_mtim.tv_sec) return p.modules[m].path;
  }
  return {};
}

class Listing {
 public:
  Listing(const model::Profile& p, const AnnotateOptions& options)
      : p_(p), options_(options), names_(options.full_names ? FullNames(p) : ShortNames(p)) {
    table_options_.color = options.color;
    if (options.costs)
      for (const model::FunctionCost& c : options.costs->functions) cost_by_name_[c.name] = &c;
  }

  void index(std::string& out) const {
    if (options_.costs) {
      costIndex(out);
    } else {
      timeIndex(out);
    }
  }

  // One source file: its functions above the cutoff, with context around their hot lines and
  // the rest folded, or all of it with --all.
  void file(const std::map<uint32_t, const model::Line*>& lines,
            const std::multimap<uint32_t, uint32_t>& functions, const std::string& found,
            bool whole, std::string& out) const {
    std::vector<std::string> text = ReadSourceLines(p_, found);
    std::vector<bool> shown = whole ? std::vector<bool>(text.size() + 2, true)
                                    : shownLines(text.size(), lines, functions);
    // A file asked for by name with nothing above the cutoff: all of it.
    if (std::none_of(shown.begin(), shown.end(), [](bool b) { return b; }))
      shown.assign(text.size() + 2, true);
    out += fmt::format("\n{}\n", found);
    out += options_.costs
               ? fmt::format("{:>6}  {:>12}  {:>12}  {:>6}  source\n", "line", "count", "cost", "%")
               : fmt::format("{:>6}  {:>12}  {:>10}  {:>10}  {:>6}  {:>10}  {:>6}  source\n",
                             "line", "count", "self", "average", "%", "inclusive", "%");
    for (uint32_t number = 1; number <= text.size();) {
      if (!shown[number]) {
        uint32_t end = number;
        while (end + 1 <= text.size() && !shown[end + 1]) ++end;
        out += end == number ? fmt::format("{:>6}  ⋮ line {} folded\n", "", number)
                             : fmt::format("{:>6}  ⋮ lines {}-{} folded\n", "", number, end);
        number = end + 1;
        continue;
      }
      for (auto [it, end] = functions.equal_range(number); it != end; ++it)
        out += functionHeader(model::FunctionId(it->second));
      auto it = lines.find(number);
      out += row(number, it == lines.end() ? nullptr : it->second, text[number - 1]);
      ++number;
    }
  }

  bool aboveCutoff(const model::Function& f) const {
    if (options_.costs) {
      auto c = cost_by_name_.find(f.name);
      return c != cost_by_name_.end() && costPercent(c->second->implicit_cost) >= options_.cutoff;
    }
    return f.inclusive_ns > 0 && p_.percentOfTotal(f.inclusive_ns) >= options_.cutoff;
  }

 private:
  static std::vector<std::string> FullNames(const model::Profile& p) {
    std::vector<std::string> names;
    for (const model::Function& f : p.functions) names.push_back(f.name);
    return names;
  }

  double costPercent(double cost) const {
    return options_.costs && options_.costs->total > 0 ? 100.0 * cost / options_.costs->total : 0.0;
  }
  const AnnotateOptions::LineCost* costOf(const model::Line& l) const {
    auto c = options_.line_costs.find({p_.file(l.file).path, l.line});
    return c == options_.line_costs.end() ? nullptr : &c->second;
  }
  bool neverRan(const model::Line* l) const { return l && l->count_exact && l->count == 0; }
  bool hot(const model::Line* l) const {
    if (!l) return false;
    if (neverRan(l)) return true;
    const AnnotateOptions::LineCost* c = options_.costs ? costOf(*l) : nullptr;
    return options_.costs ? c && (c->cost > 0 || c->uncounted > 0) : l->inclusive_ns > 0;
  }

  // Which lines (1-based; index 0 unused) a folded listing shows: in each function above the
  // cutoff (from its definition to the next function's), its first line and every hot line,
  // each with kContext lines around.
  std::vector<bool> shownLines(size_t size, const std::map<uint32_t, const model::Line*>& lines,
                               const std::multimap<uint32_t, uint32_t>& functions) const {
    std::vector<bool> shown(size + 2, false);
    auto show = [&](uint32_t from, uint32_t to) {
      for (uint32_t n = std::max<uint32_t>(from, 1); n <= to && n <= size; ++n) shown[n] = true;
    };
    for (auto it = functions.begin(); it != functions.end(); ++it) {
      if (!aboveCutoff(p_.function(model::FunctionId(it->second)))) continue;
      uint32_t first = it->first;
      auto next = functions.upper_bound(first);
      uint32_t last = next == functions.end() ? static_cast<uint32_t>(size) : next->first - 1;
      show(first, first);
      for (auto l = lines.lower_bound(first); l != lines.end() && l->first <= last; ++l)
        if (hot(l->second))
          show(l->first > kContext ? l->first - kContext : 1, l->first + kContext);
    }
    // With costs, a line that costs at least the cutoff is shown wherever it is: code inlined
    // into another function is charged to that function, not to the one it was written in.
    if (options_.costs)
      for (const auto& [number, l] : lines)
        if (const AnnotateOptions::LineCost* c = costOf(*l);
            c && costPercent(c->cost) >= options_.cutoff)
          show(number > kContext ? number - kContext : 1, number + kContext);
    // A gap of one line is shown rather than folded.
    for (size_t n = 2; n + 1 <= size; ++n)
      if (!shown[n] && shown[n - 1] && shown[n + 1]) shown[n] = true;
    return shown;
  }

  std::string functionHeader(model::FunctionId id) const {
    const model::Function& f = p_.function(id);
    const std::string& name = names_[id.index()];
    if (options_.costs) {
      auto c = cost_by_name_.find(f.name);
      if (c == cost_by_name_.end()) return {};
      return fmt::format("{:>6}  -- {}: self {:.0f} ({}%), inclusive {:.0f} ({}%), calls {}\n", "",
                         name, c->second->explicit_cost,
                         FormatPercent(costPercent(c->second->explicit_cost)),
                         c->second->implicit_cost,
                         FormatPercent(costPercent(c->second->implicit_cost)), c->second->calls);
    }
    return fmt::format("{:>6}  -- {}: self {} ({}%), inclusive {} ({}%), calls {}\n", "", name,
                       FormatTime(f.self_ns, false), FormatPercent(p_.percentOfTotal(f.self_ns)),
                       FormatTime(f.inclusive_ns, false),
                       FormatPercent(p_.percentOfTotal(f.inclusive_ns)),
                       FormatCount(f.calls, f.calls_exact, false));
  }

  std::string row(uint32_t number, const model::Line* l, const std::string& source) const {
    std::string left;
    double share = 0;
    if (!l) {
      left = options_.costs ? fmt::format("{:>6}  {:>12}  {:>12}  {:>6}", number, "", "", "")
                            : fmt::format("{:>6}  {:>12}  {:>10}  {:>10}  {:>6}  {:>10}  {:>6}",
                                          number, "", "", "", "", "", "");
    } else {
      // A line only ever seen calling has no estimated count of its own.
      std::string count = neverRan(l) ? "#####"
                          : l->count == 0 && !l->count_exact
                              ? ""
                              : FormatCount(l->count, l->count_exact, false);
      if (options_.costs) {
        const AnnotateOptions::LineCost* c = costOf(*l);
        double cost = c ? c->cost : 0;
        share = costPercent(cost);
        // "+": blocks of this line whose count the counters do not fix may add some.
        std::string shown = cost > 0 || (c && c->uncounted) ? fmt::format("{:.0f}", cost) : "";
        if (c && c->uncounted) shown += "+";
        left = fmt::format("{:>6}  {:>12}  {:>12}  {:>6}", number, count, shown,
                           cost > 0 ? FormatPercent(share) : "");
      } else {
        share = p_.percentOfTotal(l->time_ns);
        bool timed = l->time_ns > 0;
        // A line that calls: its callees' time too, in the inclusive columns.
        bool calls = l->inclusive_ns > l->time_ns;
        left = fmt::format(
            "{:>6}  {:>12}  {:>10}  {:>10}  {:>6}  {:>10}  {:>6}", number, count,
            timed ? FormatTime(l->time_ns, false) : "",
            timed && l->count ? FormatAverage(l->time_ns / l->count, l->count_exact, false) : "",
            timed ? FormatPercent(share) : "", calls ? FormatTime(l->inclusive_ns, false) : "",
            calls ? FormatPercent(p_.percentOfTotal(l->inclusive_ns)) : "");
        if (calls) share = std::max(share, p_.percentOfTotal(l->inclusive_ns));
      }
    }
    const char* color = options_.color ? HeatColor(share) : "";
    if (options_.color && neverRan(l)) color = "\x1b[35m";
    return fmt::format("{}{}{}  {}\n", color, left, *color ? kColorReset : "", source);
  }

  // The index by time: functions and files that cost at least the cutoff.
  void timeIndex(std::string& out) const {
    TableWriter w(table_options_, out);
    w.title("index", fmt::format("Index: functions and files costing at least {}% of the total "
                                 "(self: in the function's own lines; inclusive: with its callees)",
                                 FormatPercent(options_.cutoff)));
    w.header({"self", "percent", "inclusive", "percent", "calls", "function"});
    std::vector<uint32_t> order;
    // libc's start-up chain holds main: it says nothing main does not (as in report -G).
    for (uint32_t i = 0; i < p_.functions.size(); ++i)
      if (aboveCutoff(p_.functions[i]) &&
          !(p_.functions[i].self_ns == 0 && model::IsStartupFunction(p_.functions[i].name)))
        order.push_back(i);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return p_.functions[a].inclusive_ns > p_.functions[b].inclusive_ns;
    });
    for (uint32_t i : order) {
      const model::Function& f = p_.functions[i];
      w.row({FormatTime(f.self_ns, false), FormatPercent(p_.percentOfTotal(f.self_ns)),
             FormatTime(f.inclusive_ns, false), FormatPercent(p_.percentOfTotal(f.inclusive_ns)),
             FormatCount(f.calls, f.calls_exact, false), names_[i]});
    }
    w.flush();
    w.blank();
    w.header({"time", "percent", "file"});
    for (const model::File& f : p_.files)
      if (f.time_ns > 0 && p_.percentOfTotal(f.time_ns) >= options_.cutoff)
        w.row({FormatTime(f.time_ns, false), FormatPercent(p_.percentOfTotal(f.time_ns)), f.path});
  }

  // The index by Knuth's cost (counts × instructions; no timing in the profile).
  void costIndex(std::string& out) const {
    const model::CostModel& costs = *options_.costs;
    TableWriter w(table_options_, out);
    w.title("index",
            costs.counted
                ? fmt::format("Index by instructions executed, counted from the block counters "
                              "(self: the function's own; inclusive: with its callees, from the "
                              "call graph's linear system; at least {}% of {:.0f} instructions; "
                              "+: blocks the counters do not determine may add {})",
                              FormatPercent(options_.cutoff), costs.total,
                              costs.unbounded ? "any number (a loop without a counter)"
                                              : fmt::format("up to {}", costs.uncounted))
                : fmt::format("Index by cost = executions × instructions (self: the "
                              "function's own lines; inclusive: with its callees, from the "
                              "call graph's linear system; at least {}% of {:.0f} instructions)",
                              FormatPercent(options_.cutoff), costs.total));
    w.header({"self", "percent", "inclusive", "percent", "calls", "function"});
    for (const model::FunctionCost& c : costs.functions) {
      if (costPercent(c.implicit_cost) < options_.cutoff) continue;
      std::string cycle = c.cycle >= 0 ? fmt::format(" <cycle {}>", c.cycle + 1) : "";
      w.row({fmt::format("{:.0f}{}", c.explicit_cost, c.uncounted ? "+" : ""),
             FormatPercent(costPercent(c.explicit_cost)), fmt::format("{:.0f}", c.implicit_cost),
             FormatPercent(costPercent(c.implicit_cost)), fmt::format("{}", c.calls),
             (options_.full_names ? c.name : ShortName(c.name, false)) + cycle});
    }
  }

  const model::Profile& p_;
  const AnnotateOptions& options_;
  std::vector<std::string> names_;
  ReportOptions table_options_;
  std::map<std::string, const model::FunctionCost*> cost_by_name_;
};

}  // namespace

void PrintAnnotated(const model::Profile& p, const AnnotateOptions& options, std::string& out,
                    AnnotateMessages& messages) {
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
      if (!options.sources.empty() && !Asked(p.file(model::FileId(file)).path, options)) continue;
      for (const auto& [number, l] : lines) {
        bool known = l->count_exact || !p.summary.exact_line_counts;
        out += fmt::format("{}\t{}\t{}\t{}\n", p.file(l->file).path, number,
                           known ? fmt::format("{}", l->count) : "", l->time_ns);
      }
    }
    return;
  }

  Listing listing(p, options);
  listing.index(out);
  std::map<uint32_t, std::set<uint32_t>> modules = ModulesOfFiles(p);
  std::vector<std::string> never;  // "file: ranges"
  for (const auto& [file, lines] : lines_of) {
    const std::string& path = p.file(model::FileId(file)).path;
    bool asked = Asked(path, options);
    if (!options.sources.empty() && !asked) continue;
    std::vector<uint32_t> never_here;
    for (const auto& [number, l] : lines)
      if (l->count_exact && l->count == 0) never_here.push_back(number);
    if (!never_here.empty()) never.push_back(path + ": " + Ranges(never_here));
    if (!asked && !options.system && SystemFile(p, path, modules[file])) {
      ++messages.system_files;
      continue;
    }
    const auto& functions = functions_of[file];
    bool wanted =
        asked || options.all || std::any_of(functions.begin(), functions.end(), [&](const auto& f) {
          return listing.aboveCutoff(p.function(model::FunctionId(f.second)));
        });
    if (!wanted) {
      ++messages.files_below_cutoff;
      continue;
    }
    std::string found = FindSource(p, path, options.source_dirs);
    if (found.empty()) {
      messages.notes.push_back(
          fmt::format("cannot find the source {} (use --source-dir DIR)", path));
      continue;
    }
    if (std::string binary =
            p.sources.count(found) ? "" : NewerThanItsBinary(p, found, modules[file]);
        !binary.empty())
      messages.warnings.push_back(
          fmt::format("{} was modified after {} was built: its lines may not match the profile",
                      found, binary));
    listing.file(lines, functions, found, options.all, out);
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

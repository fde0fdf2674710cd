#include "report/watch.h"

#include <fmt/core.h>

#include "report/names.h"
#include "report/text.h"

namespace hotline::report {
namespace {

std::string Count(uint64_t n) { return fmt::format("{}", n); }

// "worker (watch_known.c:19)".
std::string LineText(const model::WatchLine& line, const ReportOptions& options) {
  std::string name = options.full_names ? line.function : ShortName(line.function, false);
  if (line.file.empty()) return name;
  return fmt::format("{} ({}:{})", name, line.file, line.line);
}

}  // namespace

void PrintWatches(const model::WatchProfile& watches, const ReportOptions& options,
                  std::string& out) {
  // Three tables, always: -m names each.
  ReportOptions named = options;
  named.name_tables = true;
  TableWriter w(named, out);
  bool any_reads = false;
  for (const auto& v : watches.variables) any_reads |= v.reads_counted;
  w.title("watch", any_reads ? "Watched variables: writes and reads (hardware watchpoints)"
                             : "Watched variables: writes (hardware watchpoints; reads not "
                               "counted: --watch-reads)");
  w.header({"writes", "reads", "lost", "min", "max", "distinct", "type", "variable"});
  for (const auto& v : watches.variables) {
    bool written = v.writes > 0;
    w.row({Count(v.writes), v.reads_counted ? Count(v.reads) : "-", Count(v.lost),
           written ? v.min.text : "-", written ? v.max.text : "-", Count(v.distinct), v.type_name,
           v.name + (v.from_api ? " (hotline_watch)" : "")});
  }
  w.flush();
  for (const auto& v : watches.variables) {
    if (v.lost)
      out += fmt::format(
          "{}warning: {}: the kernel counted {} writes, {} were recorded ({} lost: a thread's "
          "buffer was full)\n",
          options.machine ? "# " : "", v.name, v.kernel_writes, v.writes, v.lost);
  }

  w.title("watch_values", "Most frequent values written");
  w.header({"writes", "percent", "value", "variable"});
  for (const auto& v : watches.variables) {
    for (const model::WatchValue& value : v.top_values)
      w.row({Count(value.writes),
             FormatPercent(v.writes ? 100.0 * double(value.writes) / double(v.writes) : 0),
             value.text, v.name});
  }
  w.flush();

  w.title("watch_lines", "Lines that wrote watched variables");
  w.header({"writes", "percent", "variable", "line"});
  for (const auto& v : watches.variables) {
    for (const model::WatchLine& line : v.lines)
      w.row({Count(line.writes),
             FormatPercent(v.writes ? 100.0 * double(line.writes) / double(v.writes) : 0), v.name,
             LineText(line, options)});
  }
  w.flush();
  if (!options.machine)
    for (const std::string& note : watches.notes) out += "note: " + note + "\n";
}

}  // namespace hotline::report

#include "report/report.h"

#include <fmt/format.h>

#include "report/names.h"
#include "report/text.h"

namespace hotline::report {

void PrintReport(const model::Profile& p, const ReportOptions& asked, std::string& out) {
  ReportOptions options = asked;
  int tables = options.top + options.graph + options.files + options.lines + options.flat +
               options.functions + options.procedures + (options.raw || options.stack_changes);
  options.name_tables = options.machine && tables > 1;
  // -m keeps the whole names: they are what a program matches on.
  if (!options.full_names && !options.machine && !options.names)
    options.names = std::make_shared<const std::vector<std::string>>(ShortNames(p));
  if (p.only_thread && !options.machine) {
    std::string name;
    for (const model::Thread& t : p.threads)
      if (t.tid == *p.only_thread && !t.name.empty()) name = " (" + t.name + ")";
    if (!out.empty()) out += '\n';
    out += fmt::format("=== thread {}{}\n", *p.only_thread, name);
  }
  if (options.top) PrintTopLines(p, options, out);
  if (options.graph) PrintCallGraph(p, options, out);
  if (options.files) PrintFiles(p, options, out);
  if (options.lines) PrintLines(p, options, out);
  if (options.flat) PrintFlat(p, options, out);
  if (options.functions) PrintFunctions(p, options, out);
  if (options.procedures) PrintProcedures(p, options, out);
  if (options.raw || options.stack_changes) PrintRaw(p, options, out);
  PrintSummary(p, options, out);
}

}  // namespace hotline::report

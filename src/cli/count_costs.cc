#include "cli/count_costs.h"

#include "format/raw_profile.h"
#include "symbolize/code_map.h"

namespace hotline::cli {

Expected<CountCosts> CostsOfCounts(const std::string& path, const model::Profile& profile) {
  format::ReadStats stats;
  Expected<format::RawProfile> raw = format::LoadRawProfile(path, &stats);
  if (!raw) return raw.status();
  std::string binary = raw->line_counts.empty() ? "" : raw->line_counts.front().module;
  if (binary.empty()) return Status::Error("no binary named");
  Expected<symbolize::CodeMap> code = symbolize::BuildCodeMap(binary);
  if (!code) return code.status();
  Expected<model::CostModel> model =
      model::CostsFromCounts(*raw, *code, profile.summary.traced ? &profile : nullptr);
  if (!model) return model.status();
  CountCosts costs{std::move(*model), {}};
  if (!raw->line_instructions.empty()) {
    for (const format::RawLineInstructions& f : raw->line_instructions)
      for (const format::RawLineInstructions::Row& l : f.lines) {
        report::AnnotateOptions::LineCost& c = costs.lines[{f.file, uint32_t(l.line)}];
        c.cost += double(l.executed);
        c.uncounted = l.unbounded || c.uncounted == report::AnnotateOptions::kUnbounded
                          ? report::AnnotateOptions::kUnbounded
                          : c.uncounted + l.uncounted;
      }
    return costs;
  }
  std::map<std::pair<std::string, uint32_t>, uint64_t> executions;
  for (const format::RawLineCounts& f : raw->line_counts)
    for (const auto& [line, count] : f.lines) executions[{f.file, uint32_t(line)}] += count;
  for (const symbolize::CodeFunction& f : code->functions)
    for (const symbolize::CodeLine& l : f.lines) {
      auto e = executions.find({l.file, l.line});
      if (e != executions.end())
        costs.lines[{l.file, l.line}].cost += double(e->second) * l.instructions;
    }
  return costs;
}

}  // namespace hotline::cli

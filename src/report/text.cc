#include "report/text.h"

#include <fmt/format.h>

namespace hotline::report {

std::string FormatTime(uint64_t ns, bool machine) {
  if (machine || ns < 1000) return machine ? fmt::format("{}", ns) : fmt::format("{}ns", ns);
  double v = static_cast<double>(ns);
  if (ns < 1'000'000) return fmt::format("{:.2f}us", v / 1e3);
  if (ns < 1'000'000'000) return fmt::format("{:.2f}ms", v / 1e6);
  return fmt::format("{:.2f}s", v / 1e9);
}

std::string FormatPercent(double percent) { return fmt::format("{:.2f}", percent); }

std::string SampledClock(const model::Profile& p) {
  return p.summary.clock == format::ClockMode::kWall ? "elapsed time, sampled"
                                                     : "CPU time, sampled";
}

std::string FunctionLabel(const model::Profile& profile, model::FunctionId id,
                          const ReportOptions& options) {
  const model::Function& f = profile.function(id);
  if (!options.definitions || f.pseudo != model::PseudoKind::kNone || !f.file.valid())
    return f.name;
  return fmt::format("{} [{}:{}]", f.name, profile.file(f.file).path, f.line);
}

std::string FileNumber(model::FileId file) {
  return file.valid() ? fmt::format("{}", file.index() + 1) : "0";
}

TableWriter::TableWriter(const model::Profile& profile, const ReportOptions& options,
                         std::string& out)
    : options_(options), out_(out) {
  if (options.machine && profile.only_thread) prefix_ = fmt::format("{}\t", *profile.only_thread);
}

void TableWriter::title(std::string_view text) {
  if (options_.machine) return;
  if (!out_.empty()) out_ += '\n';
  out_ += text;
  out_ += '\n';
}

void TableWriter::header(std::initializer_list<std::string_view> names) {
  if (options_.machine) return;
  columns(names);
}

void TableWriter::row(std::initializer_list<std::string_view> values) {
  out_ += prefix_;
  columns(values);
}

void TableWriter::blank() {
  if (!options_.machine) out_ += '\n';
}

void TableWriter::columns(std::initializer_list<std::string_view> values) {
  bool first = true;
  for (std::string_view v : values) {
    if (!first) out_ += '\t';
    out_ += v;
    first = false;
  }
  out_ += '\n';
}

}  // namespace hotline::report

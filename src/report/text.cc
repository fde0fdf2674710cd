#include "report/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace hotline::report {

std::string FormatTime(uint64_t ns, bool machine) {
  if (machine || ns < 1000) return machine ? fmt::format("{}", ns) : fmt::format("{}ns", ns);
  double v = static_cast<double>(ns);
  if (ns < 1'000'000) return fmt::format("{:.2f}us", v / 1e3);
  if (ns < 1'000'000'000) return fmt::format("{:.2f}ms", v / 1e6);
  return fmt::format("{:.2f}s", v / 1e9);
}

std::string FormatSpread(const model::RunSpread& spread, bool machine) {
  if (machine) return fmt::format("{}-{}", spread.min_ns, spread.max_ns);
  return FormatTime(spread.min_ns, false) + "\u2013" + FormatTime(spread.max_ns, false);
}

void AddSpreadCells(std::vector<std::string>& cells, const std::vector<std::string>& spreads,
                    bool machine) {
  cells.insert(machine || cells.empty() ? cells.end() : cells.end() - 1, spreads.begin(),
               spreads.end());
}

std::vector<std::string_view> Cells(const std::vector<std::string>& cells) {
  return std::vector<std::string_view>(cells.begin(), cells.end());
}

std::string FormatPercent(double percent) { return fmt::format("{:.2f}", percent); }

std::string SampledClock(const model::Profile& p) {
  // An interpreter's front-end without a sampler measured every statement's time.
  bool measured = p.summary.interpreted && p.summary.sampler == format::Sampler::kNone;
  return fmt::format("{} time, {}", p.summary.clock == format::ClockMode::kWall ? "elapsed" : "CPU",
                     measured ? "measured" : "sampled");
}

std::string FormatChange(double fraction) {
  if (fraction > 9.99) return ">+999%";
  return fmt::format("{:+.1f}%", 100 * fraction);
}

std::string FunctionLabel(const model::Profile& profile, model::FunctionId id,
                          const ReportOptions& options) {
  const model::Function& f = profile.function(id);
  const std::string& name =
      options.names && id.index() < options.names->size() ? (*options.names)[id.index()] : f.name;
  if (!options.definitions || f.pseudo != model::PseudoKind::kNone || !f.file.valid()) return name;
  return fmt::format("{} [{}:{}]", name, profile.file(f.file).path, f.line);
}

// An estimate keeps its mark in -m too: a sum of exact and estimated counts is an estimate,
// and a script must be able to tell it from an exact one.
std::string FormatCount(uint64_t count, bool exact, bool) {
  return fmt::format("{}{}", exact || count == 0 ? "" : "~", count);
}

std::string FormatAverage(uint64_t ns, bool exact, bool machine) {
  return (exact || ns == 0 ? "" : "~") + FormatTime(ns, machine);
}

const char* HeatColor(double percent) {
  if (percent >= 10) return "\x1b[1;31m";
  if (percent >= 2) return "\x1b[33m";
  if (percent > 0) return "\x1b[32m";
  return "";
}

std::string FileNumber(model::FileId file) {
  return file.valid() ? fmt::format("{}", file.index() + 1) : "0";
}

TableWriter::TableWriter(const model::Profile& profile, const ReportOptions& options,
                         std::string& out)
    : options_(options), out_(out) {
  if (options.machine && profile.only_thread) prefix_ = fmt::format("{}\t", *profile.only_thread);
}

TableWriter::~TableWriter() { flush(); }

void TableWriter::title(std::string_view id, std::string_view text) {
  if (options_.machine) {
    if (options_.name_tables) out_ += fmt::format("# {}\n", id);
    return;
  }
  pending_.push_back(Line{Kind::kTitle, {std::string(text)}});
}

void TableWriter::header(std::initializer_list<std::string_view> names) {
  header(std::span<const std::string_view>(names.begin(), names.size()));
}

void TableWriter::header(std::span<const std::string_view> names) {
  if (options_.machine) return;
  Line line{Kind::kHeader, {}};
  for (std::string_view name : names) line.cells.emplace_back(name == "percent" ? "%" : name);
  pending_.push_back(std::move(line));
}

void TableWriter::row(std::initializer_list<std::string_view> values) {
  row(std::span<const std::string_view>(values.begin(), values.size()));
}

void TableWriter::row(std::span<const std::string_view> values) {
  if (!options_.machine) {
    pending_.push_back(Line{Kind::kRow, std::vector<std::string>(values.begin(), values.end())});
    return;
  }
  out_ += prefix_;
  bool first = true;
  for (std::string_view v : values) {
    if (!first) out_ += '\t';
    out_ += v;
    first = false;
  }
  out_ += '\n';
}

void TableWriter::blank() {
  if (!options_.machine) pending_.push_back(Line{Kind::kBlank, {}});
}

namespace {

// A cell of a column of numbers: times, counts, percentages, n/m, estimates (~12), signed
// changes (+5.00ms, -3.1%), or "-".
bool Numeric(const std::string& cell) {
  return cell.empty() || cell == "-" || std::isdigit(static_cast<unsigned char>(cell[0])) ||
         (cell.size() > 1 && (cell[0] == '~' || cell[0] == '-' || cell[0] == '+') &&
          std::isdigit(static_cast<unsigned char>(cell[1])));
}

// `text` cut to `room` characters (counting a UTF-8 sequence as one) with an ellipsis, when
// `limited`; never below 12 characters, so that a name stays recognisable.
std::string Fit(const std::string& text, size_t room, bool limited) {
  if (!limited) return text;
  room = std::max<size_t>(room, 12);
  size_t shown = 0, at = 0;
  while (at < text.size() && shown < room) {
    at += 1;
    while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
    ++shown;
  }
  if (at >= text.size()) return text;
  // Room for the ellipsis: drop the last character shown.
  size_t cut = at;
  do --cut;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80);
  return text.substr(0, cut) + "…";
}

}  // namespace

void TableWriter::note(std::string_view text) {
  if (!options_.machine) pending_.push_back(Line{Kind::kNote, {std::string(text)}});
}

void TableWriter::flush() {
  if (pending_.empty()) return;
  // Widths and alignment of every column but each row's last; which columns are percentages.
  std::vector<size_t> widths;
  std::vector<bool> numeric, percent;
  for (const Line& line : pending_)
    if (line.kind == Kind::kHeader)
      for (size_t c = 0; c < line.cells.size(); ++c) {
        if (percent.size() <= c) percent.resize(c + 1, false);
        percent[c] = line.cells[c] == "%" || line.cells[c] == "self %";
      }
  for (const Line& line : pending_) {
    if (line.kind != Kind::kRow && line.kind != Kind::kHeader) continue;
    for (size_t c = 0; c + 1 < line.cells.size(); ++c) {
      if (widths.size() <= c) widths.resize(c + 1, 0), numeric.resize(c + 1, true);
      widths[c] = std::max(widths[c], line.cells[c].size());
      if (line.kind == Kind::kRow && !Numeric(line.cells[c])) numeric[c] = false;
    }
  }
  for (const Line& line : pending_) {
    switch (line.kind) {
      case Kind::kTitle:
        if (!out_.empty()) out_ += '\n';
        out_ += line.cells[0];
        out_ += '\n';
        break;
      case Kind::kBlank:
        out_ += '\n';
        break;
      case Kind::kNote:
        out_ += line.cells[0];
        out_ += '\n';
        break;
      case Kind::kHeader:
      case Kind::kRow: {
        std::string text;
        size_t used = 0;  // characters shown before the last cell
        for (size_t c = 0; c < line.cells.size(); ++c) {
          std::string cell;
          if (c + 1 == line.cells.size()) {
            cell = Fit(line.cells[c], options_.width > used ? options_.width - used : 0,
                       options_.width != 0);
          } else if (numeric[c]) {
            cell = fmt::format("{:>{}}", line.cells[c], widths[c]);
          } else {
            cell = fmt::format("{:<{}}", line.cells[c], widths[c]);
          }
          const char* heat =
              options_.color && line.kind == Kind::kRow && c < percent.size() && percent[c]
                  ? HeatColor(std::atof(line.cells[c].c_str()))
                  : "";
          text += *heat ? heat + cell + kColorReset : cell;
          if (c + 1 < line.cells.size()) {
            text += "  ";
            used += cell.size() + 2;
          }
        }
        while (!text.empty() && text.back() == ' ') text.pop_back();
        out_ += text;
        out_ += '\n';
        break;
      }
    }
  }
  pending_.clear();
}

}  // namespace hotline::report

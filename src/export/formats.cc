// The table of export formats by name.
#include <fmt/format.h>

#include "export/export.h"

namespace hotline::exporter {

std::string OneLine(std::string text) {
  std::string out;
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      out += "^^";
      out += char(c ^ 0x40);
    } else {
      out += ch;
    }
  }
  return out;
}

const std::vector<std::pair<std::string_view, Format>>& KnownFormats() {
  static const std::vector<std::pair<std::string_view, Format>> formats = {
      {"pprof", Format::kPprof},   {"callgrind", Format::kCallgrind},   {"folded", Format::kFolded},
      {"chrome", Format::kChrome}, {"speedscope", Format::kSpeedscope}, {"json", Format::kJson},
  };
  return formats;
}

std::string KnownFormatNames() {
  std::string names;
  for (const auto& [name, format] : KnownFormats()) {
    if (!names.empty()) names += ", ";
    names += name;
  }
  return names;
}

std::optional<Format> FormatNamed(std::string_view name) {
  for (const auto& [known, format] : KnownFormats())
    if (known == name) return format;
  return std::nullopt;
}

}  // namespace hotline::exporter

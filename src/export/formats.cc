// The table of export formats by name.
#include <fmt/format.h>

#include "export/export.h"

namespace hotline::exporter {

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

// The annotated sources' data: for every file with data whose source is on disk, one file with
// its text and its lines' numbers (as `hotline annotate` shows them), loaded when the page shows
// it. Files whose source cannot be found are listed as missing.
#include "report/sources.h"

#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "html/parts.h"

namespace hotline::html {

void AddSources(const HtmlInput& input, nlohmann::json& data, ReportFiles& files) {
  const model::Profile& p = *input.profile;
  // Each real file's lines, as [line, count, count exact, time, inclusive time].
  std::map<uint32_t, nlohmann::json> lines_of;
  for (const model::Line& l : p.lines)
    if (l.line > 0 && p.file(l.file).pseudo == model::PseudoKind::kNone)
      lines_of[l.file.index()].push_back(
          {l.line, l.count, l.count_exact ? 1 : 0, l.time_ns, l.inclusive_ns});
  nlohmann::json list = nlohmann::json::array();
  for (uint32_t i = 0; i < p.files.size(); ++i) {
    const model::File& f = p.files[i];
    auto lines = lines_of.find(i);
    bool with_data = lines != lines_of.end();
    std::string found = with_data ? report::FindSource(p, f.path, input.source_dirs) : "";
    list.push_back({{"path", f.path},
                    {"time_ns", f.time_ns},
                    {"count", f.count},
                    {"lines_hit", f.lines_hit},
                    {"pseudo", f.pseudo != model::PseudoKind::kNone},
                    {"data", with_data},
                    {"source", !found.empty()}});
    if (found.empty()) continue;
    std::string key = fmt::format("source-{}", i);
    files["data/" + key + ".js"] = DataScript(key, {{"path", f.path},
                                                    {"found", found},
                                                    {"text", report::ReadSourceLines(p, found)},
                                                    {"lines", std::move(lines->second)}});
  }
  data["files"] = std::move(list);
}

}  // namespace hotline::html

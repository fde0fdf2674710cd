#include "report/sources.h"

#include <filesystem>
#include <fstream>

namespace hotline::report {

namespace fs = std::filesystem;

bool SourceMatches(const std::string& path, const std::string& source) {
  return path == source || (path.size() > source.size() && path.ends_with(source) &&
                            path[path.size() - source.size() - 1] == '/');
}

std::string FindSource(const std::string& path, const std::vector<std::string>& source_dirs) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return path;
  fs::path p(path);
  std::vector<fs::path> parts(p.begin(), p.end());
  for (const std::string& dir : source_dirs) {
    for (size_t skip = 0; skip < parts.size(); ++skip) {
      fs::path candidate(dir);
      for (size_t i = skip; i < parts.size(); ++i)
        if (parts[i] != "/") candidate /= parts[i];
      if (fs::is_regular_file(candidate, ec)) return candidate.string();
    }
  }
  return {};
}

std::vector<std::string> ReadSourceLines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string FindSource(const model::Profile& profile, const std::string& path,
                       const std::vector<std::string>& source_dirs) {
  if (profile.sources.count(path)) return path;
  return FindSource(path, source_dirs);
}

std::vector<std::string> ReadSourceLines(const model::Profile& profile, const std::string& found) {
  auto embedded = profile.sources.find(found);
  if (embedded == profile.sources.end()) return ReadSourceLines(found);
  std::vector<std::string> lines;
  std::string_view text = embedded->second;
  while (!text.empty()) {
    size_t end = text.find('\n');
    lines.emplace_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

}  // namespace hotline::report

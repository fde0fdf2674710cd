#include "html/html.h"

#include <fmt/format.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "html/assets.h"
#include "html/parts.h"

namespace hotline::html {
namespace {

namespace fs = std::filesystem;

// What every report holds, so that a directory can be told to be one (and replaced).
constexpr const char* kMarker = "report.js";

Status Errno(const std::string& what) {
  return Status::Error(fmt::format("{}: {}", what, std::strerror(errno)));
}

ReportFiles Collect(const HtmlInput& input) {
  ReportFiles files;
  nlohmann::json data;
  AddOverview(input, data);
  AddFunctions(*input.profile, data, files);
  AddFlameGraphs(*input.profile, data, files);
  AddSources(input, data, files);
  AddTables(*input.profile, data, files);
  if (input.heap) AddHeap(*input.heap, data);
  if (input.watches) AddWatches(*input.watches, data);
  AddTimeline(*input.profile, data, files);
  if (input.complexity && !input.complexity->empty()) AddComplexity(*input.complexity, data, files);
  files["data/data.js"] = DataScript("data", data);
  return files;
}

Status WriteFiles(const ReportFiles& files, const fs::path& dir) {
  std::error_code ec;
  for (const auto& [name, bytes] : files) {
    fs::path path = dir / name;
    fs::create_directories(path.parent_path(), ec);
    if (ec) return Status::Error(fmt::format("{}: {}", path.parent_path().string(), ec.message()));
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) return Errno(fmt::format("cannot write {}", path.string()));
  }
  return Status();
}

// Refuses a `dir` that holds something other than an earlier report.
Status CheckReplaceable(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return Status();
  if (!fs::is_directory(dir, ec))
    return Status::Error(fmt::format("{}: exists and is not a directory", dir.string()));
  if (fs::is_empty(dir, ec) || fs::exists(dir / kMarker, ec)) return Status();
  return Status::Error(
      fmt::format("{}: not empty and not a hotline report: refusing to replace it", dir.string()));
}

// Puts the complete report `built` where `dir` is, moving an earlier report out of the way first.
Status MoveIntoPlace(const fs::path& built, const fs::path& dir) {
  std::error_code ec;
  fs::path old;
  if (fs::exists(dir, ec)) {
    std::string name =
        (dir.parent_path() / ("." + dir.filename().string() + ".old-XXXXXX")).string();
    if (!mkdtemp(name.data())) return Errno(fmt::format("cannot replace {}", dir.string()));
    old = name;
    if (rename(dir.c_str(), old.c_str()) != 0) {
      fs::remove(old, ec);
      return Errno(fmt::format("cannot replace {}", dir.string()));
    }
  }
  if (rename(built.c_str(), dir.c_str()) != 0) {
    Status failed = Errno(fmt::format("cannot create {}", dir.string()));
    if (!old.empty()) rename(old.c_str(), dir.c_str());
    return failed;
  }
  if (!old.empty()) fs::remove_all(old, ec);
  return Status();
}

}  // namespace

Status WriteReport(ReportFiles files, const std::string& dir_name) {
  fs::path dir = fs::path(dir_name).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();  // "out/" names "out"
  if (dir.empty()) return Status::Error("no output directory given");
  if (Status s = CheckReplaceable(dir); !s.ok()) return s;
  fs::path parent = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(parent, ec))
    return Status::Error(
        fmt::format("cannot create {}: {} is not a directory", dir.string(), parent.string()));
  for (const Asset& asset : Assets()) files[asset.name] = std::string(asset.bytes);
  std::string temp = (parent / ("." + dir.filename().string() + ".tmp-XXXXXX")).string();
  if (!mkdtemp(temp.data())) return Errno(fmt::format("cannot create {}", dir.string()));
  chmod(temp.c_str(), 0755);  // mkdtemp's 0700 would hide the report from a web server's user
  Status written = WriteFiles(files, temp);
  if (written.ok()) written = MoveIntoPlace(temp, dir);
  if (!written.ok()) fs::remove_all(temp, ec);
  return written;
}

Status WriteHtmlReport(const HtmlInput& input, const std::string& dir) {
  return WriteReport(Collect(input), dir);
}

}  // namespace hotline::html

#include "cli/load_profile.h"

#include <fmt/core.h>

#include "format/raw_profile.h"
#include "report/report.h"

namespace hotline::cli {

void Warn(const std::string& what) { fmt::print(stderr, "hotline: warning: {}\n", what); }

void WarnAboutFile(const std::string& path, const format::ReadStats& stats,
                   const model::Profile& profile) {
  if (stats.damaged())
    Warn(fmt::format("{}: damaged, reporting what could be read: {}", path, stats.summary()));
  for (const std::string& problem : stats.problems) Warn(fmt::format("{}: {}", path, problem));
  if (stats.unknown_records)
    Warn(fmt::format("{}: {} records of unknown kinds skipped (written by a newer hotline)", path,
                     stats.unknown_records));
  if (!profile.summary.end) Warn(fmt::format("{}: {}", path, report::DescribeEnding(profile)));
}

Expected<model::Profile> LoadOne(const std::string& path, model::AddressResolver& resolver,
                                 const model::BuildOptions& build) {
  format::ReadStats stats;
  Expected<model::Profile> profile = model::LoadProfile(path, resolver, build, &stats);
  if (profile) WarnAboutFile(path, stats, *profile);
  return profile;
}

Expected<std::vector<model::Profile>> LoadEach(const std::vector<std::string>& paths,
                                               model::AddressResolver& resolver,
                                               const model::BuildOptions& build) {
  std::vector<model::Profile> profiles;
  for (const std::string& path : paths) {
    Expected<model::Profile> p = LoadOne(path, resolver, build);
    if (!p) return p.status();
    profiles.push_back(std::move(*p));
  }
  return profiles;
}

Expected<std::vector<model::Profile>> LoadEveryRun(const std::vector<std::string>& paths,
                                                   model::AddressResolver& resolver,
                                                   const model::BuildOptions& build) {
  std::vector<model::Profile> profiles;
  for (const std::string& path : paths) {
    format::ReadStats stats;
    Expected<std::vector<model::Profile>> runs = model::LoadRuns(path, resolver, build, &stats);
    if (!runs) return runs.status();
    for (model::Profile& run : *runs) {
      WarnAboutFile(path, stats, run);
      stats = {};  // the file's damage once
      profiles.push_back(std::move(run));
    }
  }
  return profiles;
}

std::optional<model::HeapProfile> LoadHeap(const std::string& path,
                                           model::AddressResolver& resolver) {
  Expected<model::HeapLoad> loaded = model::LoadHeapProfile(path, resolver);
  if (!loaded || !loaded->heap) return std::nullopt;
  return std::move(*loaded->heap);
}

std::optional<model::WatchProfile> LoadWatches(const std::string& path,
                                               model::AddressResolver& resolver) {
  Expected<format::RawProfile> raw = format::LoadRawProfile(path, nullptr, false);
  if (!raw) return std::nullopt;
  Expected<model::WatchProfile> watches = model::BuildWatchProfile(*raw, resolver);
  if (!watches) return std::nullopt;
  return std::move(*watches);
}

}  // namespace hotline::cli

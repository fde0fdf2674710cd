// Loading the profiles a command reads, with what was wrong with each file said on stderr as
// warnings (one line each): shared by report and diff.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "format/reader.h"
#include "model/build.h"
#include "model/heap.h"
#include "model/merge.h"
#include "model/watch.h"

namespace hotline::cli {

void Warn(const std::string& what);

// What was wrong with the file at `path`: damage, unknown records, a missing END.
void WarnAboutFile(const std::string& path, const format::ReadStats& stats,
                   const model::Profile& profile);

// The profile at `path` (a merged file's runs added up), its problems warned about.
Expected<model::Profile> LoadOne(const std::string& path, model::AddressResolver& resolver,
                                 const model::BuildOptions& build);

// Each of `paths`, loaded with LoadOne.
Expected<std::vector<model::Profile>> LoadEach(const std::vector<std::string>& paths,
                                               model::AddressResolver& resolver,
                                               const model::BuildOptions& build);

// Every run of `paths`, a merged file's one by one, their problems warned about.
Expected<std::vector<model::Profile>> LoadEveryRun(const std::vector<std::string>& paths,
                                                   model::AddressResolver& resolver,
                                                   const model::BuildOptions& build);

// The heap of the profile at `path` (recorded with --heap); none when it cannot be read or built.
// Built while the file is read (model::LoadHeapProfile), apart from the profile's samples.
std::optional<model::HeapProfile> LoadHeap(const std::string& path,
                                           model::AddressResolver& resolver);
// The same for the watched variables (model/watch.h).
std::optional<model::WatchProfile> LoadWatches(const std::string& path,
                                               model::AddressResolver& resolver);

}  // namespace hotline::cli

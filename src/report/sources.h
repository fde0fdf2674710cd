// Finding and reading the source files a profile names: shared by the annotated listing and the
// HTML report.
#pragma once

#include <string>
#include <vector>

#include "model/profile.h"

namespace hotline::report {

// Whether the profile's file at `path` is the one `source` names: the same path, or a path
// ending in /source.
bool SourceMatches(const std::string& path, const std::string& source);

// The file as the debug info names it, else its name under each of `source_dirs` (trying ever
// shorter tails of the path: a/b/c.c, b/c.c, c.c). Empty when not found.
std::string FindSource(const std::string& path, const std::vector<std::string>& source_dirs);

// The file's lines, without their line ends.
std::vector<std::string> ReadSourceLines(const std::string& path);

// The same, for a profile's file: the profile's own copy when it holds one (a source in no
// file: `perl -e`, string evals), else the file on disk as FindSource finds it.
std::string FindSource(const model::Profile& profile, const std::string& path,
                       const std::vector<std::string>& source_dirs);
std::vector<std::string> ReadSourceLines(const model::Profile& profile, const std::string& found);

}  // namespace hotline::report

// Finding the profile a subcommand reads when none is named, and writing several as one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace hotline::cli {

// The newest regular *.hotline file in the current directory.
Expected<std::string> NewestProfileHere();

// `file` when given, else the newest *.hotline here. A program or a folder (a sweep's runs) named
// where one profile was meant is an error that says what reads it, unless `folders` (the
// commands that read a folder's profiles: report -X, html).
Expected<std::string> ProfileArgument(const std::string& file, bool folders = false);

// ProfileArgument of each of `files`, in place; no files stands for the newest *.hotline here.
Status ResolveProfileArguments(std::vector<std::string>& files, bool folders = false);

// `files` with each directory replaced by the *.hotline files in it (a sweep's), by name; a
// directory without any stays, for its reader to say it is unreadable.
std::vector<std::string> ExpandDirectories(const std::vector<std::string>& files);

// The files one after another, written to `output` whole or not at all.
Status WriteConcatenation(const std::vector<std::string>& files, const std::string& output);

}  // namespace hotline::cli

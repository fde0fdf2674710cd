// Finding the profile a subcommand reads when none is named.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace hotline::cli {

// The newest regular *.hotline file in the current directory.
Expected<std::string> NewestProfileHere();

// `output` without its ".hotline": the BASE of the runtime's BASE.PID[.N].hotline for the
// run's other processes and programs.
std::string ProfileBase(const std::string& output);

// The BASE.PID[.N].hotline files beside `output`: of process `pid`, or of any process when 0.
std::vector<std::string> ChildProfilePaths(const std::string& output, uint32_t pid);

// `file` when given, else the newest *.hotline here.
Expected<std::string> ProfileArgument(const std::string& file);

// ProfileArgument of each of `files`, in place; no files stands for the newest *.hotline here.
Status ResolveProfileArguments(std::vector<std::string>& files);

// `files` with each directory replaced by the *.hotline files in it (a sweep's), by name; a
// directory without any stays, for its reader to say it is unreadable.
std::vector<std::string> ExpandDirectories(const std::vector<std::string>& files);

}  // namespace hotline::cli

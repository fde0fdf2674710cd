// Finding the profile a subcommand reads when none is named.
#pragma once

#include <string>

#include "base/status.h"

namespace hotline::cli {

// The newest regular *.hotline file in the current directory.
Expected<std::string> NewestProfileHere();

// `file` when given, else the newest *.hotline here.
Expected<std::string> ProfileArgument(const std::string& file);

}  // namespace hotline::cli

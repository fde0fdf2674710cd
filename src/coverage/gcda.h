// The arc counters a gcc `--coverage` run leaves in a .gcda file: for each function (by the
// ident the compiler gave it in its object file), the values of its `__gcov0.<function>` array,
// in order. Format: gcc's gcov-io.h (gcc 12: lengths in bytes, a negative length for counters
// that are all zero).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace hotline::coverage {

using ArcCounters = std::map<uint32_t, std::vector<uint64_t>>;  // function ident → counters

Expected<ArcCounters> ReadGcda(const std::string& path);

}  // namespace hotline::coverage

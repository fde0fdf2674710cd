// Tests run without the symbol cache (src/symbolize/symbol_cache.h) unless they ask for it:
// every run of the suite then reads DWARF as a first report does, no test sees another's (or an
// earlier run's) answers, and the suite leaves nothing in ~/.cache.
#pragma once

#include <cstdlib>

namespace hotline::testing {

inline const bool kSymbolCacheOff = setenv("HOTLINE_CACHE_DIR", "off", 0) == 0;

}  // namespace hotline::testing

// What the symbolizer learned about a module, kept between commands: every address it resolved,
// with its frames, in a file under the cache directory ($HOTLINE_CACHE_DIR, else
// $XDG_CACHE_HOME/hotline, else ~/.cache/hotline; "off" turns it off). A second report of the
// same profile then opens no DWARF at all. The file is named after the module's path, size,
// modification time and build-id, so a rebuilt or stripped binary never reads another's
// answers, nor does a search for debug files elsewhere; only modules with DWARF are kept (one
// without may get a debug file later).
// docs/symbols.md.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "symbolize/symbolizer.h"

namespace hotline::symbolize {

using AddressCache = std::unordered_map<uint64_t, ResolvedAddress>;  // by ELF virtual address

// Where the module's answers are kept, as found through `debug_dirs`; empty when there is no
// cache (turned off, no directory, the module cannot be read).
std::string SymbolCachePath(const ModuleInfo& module, const std::vector<std::string>& debug_dirs);

// Fills `addresses` and `returns` (return addresses) from the file; false, leaving them empty,
// when it is missing or damaged. Each answer names `module`.
bool LoadSymbolCache(const std::string& path, const std::string& module, AddressCache& addresses,
                     AddressCache& returns);

// Writes both maps to the file, whole and atomically (a temporary file renamed over it).
void SaveSymbolCache(const std::string& path, const AddressCache& addresses,
                     const AddressCache& returns);

}  // namespace hotline::symbolize

// A small profile with every record kind, written with format::Writer into memory: the input of
// the format tests and the seed of the fuzz corpus.
#pragma once

#include <cstdint>
#include <string>

namespace hotline::testing {

// Writes the sample profile to `path` in `chunks` chunks (at least 1). Returns false on error.
bool WriteSampleProfile(const std::string& path, int chunks);

}  // namespace hotline::testing

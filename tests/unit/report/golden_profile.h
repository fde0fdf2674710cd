// A deterministic profile of the code in golden_target.c, written with format::Writer: two
// threads, direct recursion, and one sample for each pseudo-entry. The golden tables and the
// CLI tests read it back like any recorded profile.
#pragma once

#include <string>

namespace hotline::testing {

// Writes the profile to `path` (several chunks, so that damage can hit one). Returns false and
// says why on failure.
// `build_id` is recorded for the test binary (empty: none, so no check).
bool WriteGoldenProfile(const std::string& path, std::string* error,
                        const std::string& build_id = "");

}  // namespace hotline::testing

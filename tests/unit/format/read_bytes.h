// A profile's bytes read as `hotline` reads a file: the status, what was read, and the damage.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "format/raw_profile.h"
#include "format/reader.h"

namespace hotline::testing {

struct Read {
  Status status;
  format::RawProfile profile;
  format::ReadStats stats;
};

inline Read ReadBytes(const std::string& bytes) {
  Read r;
  r.status = format::ReadProfileBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                                      "test", r.profile, &r.stats);
  return r;
}

}  // namespace hotline::testing

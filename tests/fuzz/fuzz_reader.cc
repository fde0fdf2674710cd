// Fuzz target for the profile reader: any bytes at all must be read without a crash, a hang or
// undefined behaviour, and every stack the reader accepted must walk without faults.
#include <cstddef>
#include <cstdint>

#include "format/raw_profile.h"
#include "format/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hotline::format::RawProfile profile;
  hotline::format::ReadStats stats;
  hotline::Status status = hotline::format::ReadProfileBytes(data, size, "fuzz", profile, &stats);
  if (!status.ok()) return 0;
  for (const auto& sample : profile.samples) {
    bool broken = false;
    for (uint64_t address : profile.stack(sample.node, &broken))
      profile.moduleAt(address, sample.time);
  }
  (void)stats.summary();
  return 0;
}

// CRC32C (Castagnoli), the checksum on every chunk of a .hotline file. Async-signal-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hotline {

// Extends `crc` (0 to start) over `size` bytes at `data`.
uint32_t Crc32c(const void* data, size_t size, uint32_t crc = 0);

}  // namespace hotline

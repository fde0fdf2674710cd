// A checked reader of DWARF-encoded bytes (unwind tables) in this process's memory: the loaded
// images the runtime unwinds, or the copies of a program's files the recorder maps. The caller
// bounds it to memory it knows is readable; a read past `end` sets !ok and yields zeros, so a
// damaged table ends its entry instead of the process.
#pragma once

#include <cstdint>
#include <cstring>

namespace hotline::unwind {

inline const void* AtAddress(uint64_t address) {
  return reinterpret_cast<const void*>(address);  // NOLINT(performance-no-int-to-ptr)
}
inline uint64_t AddressOf(const void* p) { return reinterpret_cast<uint64_t>(p); }

struct DwarfBytes {
  uint64_t p, end;
  bool ok = true;

  bool has(uint64_t n) {
    if (ok && p <= end && end - p >= n) return true;
    ok = false;
    return false;
  }
  uint8_t peek() { return has(1) ? *static_cast<const uint8_t*>(AtAddress(p)) : 0; }
  uint64_t fixed(int n) {
    if (!has(uint64_t(n))) return 0;
    uint64_t v = 0;
    std::memcpy(&v, AtAddress(p), size_t(n));  // little-endian host and tables
    p += uint64_t(n);
    return v;
  }
  int64_t signedFixed(int n) {
    uint64_t v = fixed(n);
    int shift = 64 - 8 * n;
    return shift ? int64_t(v << shift) >> shift : int64_t(v);
  }
  uint64_t uleb() {
    uint64_t v = 0;
    for (int shift = 0; has(1); shift += 7) {
      uint8_t b = *static_cast<const uint8_t*>(AtAddress(p++));
      if (shift < 64) v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    return 0;
  }
  int64_t sleb() {
    uint64_t v = 0;
    int shift = 0;
    while (has(1)) {
      uint8_t b = *static_cast<const uint8_t*>(AtAddress(p++));
      if (shift < 64) v |= uint64_t(b & 0x7f) << shift;
      shift += 7;
      if (!(b & 0x80)) {
        if (shift < 64 && (b & 0x40)) v |= ~uint64_t(0) << shift;
        return int64_t(v);
      }
    }
    return 0;
  }
  void skip(uint64_t n) {
    if (has(n)) p += n;
  }
};

}  // namespace hotline::unwind

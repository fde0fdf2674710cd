// LEB128 varints and zigzag, the encoding of every record field. Header-only; the encoder
// writes into caller memory and never allocates.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hotline {

constexpr size_t kMaxVarintBytes = 10;

// Writes `value` at `out` (room for kMaxVarintBytes), returns the bytes written.
inline size_t EncodeVarint(uint64_t value, uint8_t* out) {
  size_t n = 0;
  while (value >= 0x80) {
    out[n++] = static_cast<uint8_t>(value | 0x80);
    value >>= 7;
  }
  out[n++] = static_cast<uint8_t>(value);
  return n;
}

inline uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t UnZigZag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// A bounds-checked cursor over untrusted bytes. Every read fails (returns false) instead of
// reading past the end; once failed it stays failed.
class ByteCursor {
 public:
  ByteCursor(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}

  bool ok() const { return ok_; }
  bool atEnd() const { return p_ >= end_; }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }

  bool varint(uint64_t* out) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= end_) return fail();
      uint8_t byte = *p_++;
      result |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if (!(byte & 0x80)) {
        *out = result;
        return true;
      }
    }
    return fail();  // more than 10 bytes: not a varint
  }
  bool svarint(int64_t* out) {
    uint64_t raw;
    if (!varint(&raw)) return false;
    *out = UnZigZag(raw);
    return true;
  }
  // Points `*out` at `size` bytes inside the buffer.
  bool bytes(size_t size, const uint8_t** out) {
    if (!ok_ || size > remaining()) return fail();
    *out = p_;
    p_ += size;
    return true;
  }

 private:
  bool fail() {
    ok_ = false;
    p_ = end_;
    return false;
  }
  const uint8_t* p_;
  const uint8_t* end_;
  bool ok_ = true;
};

}  // namespace hotline

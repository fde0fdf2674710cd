// A growable byte buffer for code that may not throw (the runtime). Allocation failure sets a
// sticky flag instead of throwing; callers check failed() once per batch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "base/varint.h"

namespace hotline::format {

class ByteBuffer {
 public:
  ByteBuffer() = default;
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;
  ~ByteBuffer() { std::free(data_); }

  const uint8_t* data() const { return data_; }
  uint8_t* data() { return data_; }
  size_t size() const { return size_; }
  bool failed() const { return failed_; }
  void clear() { size_ = 0; }

  bool reserve(size_t extra) {
    if (failed_) return false;
    if (size_ + extra <= capacity_) return true;
    size_t want = capacity_ ? capacity_ * 2 : 4096;
    while (want < size_ + extra) want *= 2;
    void* grown = std::realloc(data_, want);
    if (!grown) {
      failed_ = true;
      return false;
    }
    data_ = static_cast<uint8_t*>(grown);
    capacity_ = want;
    return true;
  }
  void append(const void* bytes, size_t n) {
    if (n == 0 || !reserve(n)) return;
    std::memcpy(data_ + size_, bytes, n);
    size_ += n;
  }
  void varint(uint64_t v) {
    if (!reserve(kMaxVarintBytes)) return;
    size_ += EncodeVarint(v, data_ + size_);
  }
  void svarint(int64_t v) { varint(ZigZag(v)); }
  void u16(uint16_t v) {
    uint8_t b[2] = {uint8_t(v), uint8_t(v >> 8)};
    append(b, 2);
  }
  void u32(uint32_t v) {
    uint8_t b[4] = {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)};
    append(b, 4);
  }
  void u64(uint64_t v) {
    u32(uint32_t(v));
    u32(uint32_t(v >> 32));
  }
  // Makes room for `n` bytes and returns where they go; the caller fills them and calls
  // commit(n). Returns nullptr on allocation failure.
  uint8_t* prepare(size_t n) { return reserve(n) ? data_ + size_ : nullptr; }
  void commit(size_t n) { size_ += n; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  bool failed_ = false;
};

}  // namespace hotline::format

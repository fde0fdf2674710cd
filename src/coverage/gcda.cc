#include "coverage/gcda.h"

#include <cstring>
#include <fstream>
#include <iterator>

namespace hotline::coverage {
namespace {

constexpr uint32_t kMagic = 0x67636461;  // "gcda"
constexpr uint32_t kTagFunction = 0x01000000;
constexpr uint32_t kTagArcs = 0x01a10000;

}  // namespace

Expected<ArcCounters> ReadGcda(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error(path + ": cannot open");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, bytes.data() + at, 4);
    return v;
  };
  // magic, version, stamp, checksum
  if (bytes.size() < 16 || u32(0) != kMagic) return Status::Error(path + ": not a .gcda file");
  ArcCounters counters;
  bool in_function = false;
  uint32_t ident = 0;
  for (size_t at = 16; at + 8 <= bytes.size();) {
    uint32_t tag = u32(at);
    auto length = int32_t(u32(at + 4));
    at += 8;
    if (length < 0) {  // counters that are all zero, written without their values
      if (tag == kTagArcs && in_function) counters[ident].assign(size_t(-int64_t(length)) / 8, 0);
      continue;
    }
    if (at + size_t(length) > bytes.size()) return Status::Error(path + ": truncated");
    if (tag == kTagFunction) {
      in_function = length >= 4;
      if (in_function) ident = u32(at);
    } else if (tag == kTagArcs && in_function) {
      std::vector<uint64_t>& values = counters[ident];
      values.resize(size_t(length) / 8);
      for (size_t i = 0; i < values.size(); ++i)
        values[i] = uint64_t(u32(at + 8 * i)) | uint64_t(u32(at + 8 * i + 4)) << 32;
    }
    at += size_t(length);
  }
  return counters;
}

}  // namespace hotline::coverage

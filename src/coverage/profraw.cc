#include "coverage/profraw.h"

#include <cstring>
#include <fstream>
#include <iterator>

namespace hotline::coverage {
namespace {

constexpr uint64_t kMagic = 0xff6c70726f667281ull;  // "\xfflprofr" with the 64-bit marker
// Header: magic, version, binary ids' size, data records, padding before the counters,
// counters, padding after, names' size, counters' delta, names' delta, value kinds.
constexpr size_t kHeaderWords = 11;
constexpr size_t kDataRecordBytes = 48;  // name ref, hash, counters, function, values, sizes

}  // namespace

Expected<std::vector<uint64_t>> ReadProfrawCounters(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error(path + ": cannot open");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto word = [&](size_t i) {
    uint64_t v;
    std::memcpy(&v, bytes.data() + 8 * i, 8);
    return v;
  };
  if (bytes.size() < 8 * kHeaderWords || word(0) != kMagic)
    return Status::Error(path + ": not an LLVM raw profile");
  uint64_t version = word(1) & 0xffffffff;
  if (version < 7 || version > 8)
    return Status::Error(path + ": raw profile version " + std::to_string(version) +
                         " is not read (7 and 8 are)");
  uint64_t binary_ids = word(2), records = word(3), before = word(4), counters = word(5);
  uint64_t at = 8 * kHeaderWords + binary_ids + records * kDataRecordBytes + before;
  if (records > bytes.size() || counters > bytes.size() / 8 || at > bytes.size() ||
      counters * 8 > bytes.size() - at)
    return Status::Error(path + ": truncated raw profile");
  std::vector<uint64_t> values(counters);
  std::memcpy(values.data(), bytes.data() + at, counters * 8);
  return values;
}

}  // namespace hotline::coverage

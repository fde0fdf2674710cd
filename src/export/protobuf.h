// A minimal protobuf encoder (proto3 wire format: varints, length-delimited fields, packed
// repeated varints), enough to write pprof's profile.proto without libprotobuf.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hotline::exporter {

class ProtoWriter {
 public:
  // A varint field; zero is the default and is left out, as proto3 does.
  void varint(uint32_t field, uint64_t value) {
    if (value == 0) return;
    tag(field, kVarint);
    raw(value);
  }
  void bytes(uint32_t field, std::string_view value) {
    tag(field, kLengthDelimited);
    raw(value.size());
    out_.append(value);
  }
  // A repeated string must keep its empty elements (string_table[0] is ""): always written.
  void string(uint32_t field, std::string_view value) { bytes(field, value); }
  void message(uint32_t field, const ProtoWriter& nested) { bytes(field, nested.out_); }
  void packed(uint32_t field, const std::vector<uint64_t>& values) {
    if (values.empty()) return;
    ProtoWriter body;
    for (uint64_t v : values) body.raw(v);
    bytes(field, body.out_);
  }
  const std::string& data() const { return out_; }

 private:
  static constexpr uint32_t kVarint = 0, kLengthDelimited = 2;
  void tag(uint32_t field, uint32_t wire_type) { raw(uint64_t{field} << 3 | wire_type); }
  void raw(uint64_t value) {
    while (value >= 0x80) {
      out_.push_back(static_cast<char>(value | 0x80));
      value >>= 7;
    }
    out_.push_back(static_cast<char>(value));
  }
  std::string out_;
};

}  // namespace hotline::exporter

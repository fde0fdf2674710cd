// model::FormatWatchValue: each type reads the object's bytes as the variable's type would.
#include "model/watch.h"

#include <gtest/gtest.h>

#include <cstring>

namespace hotline::model {
namespace {

uint64_t Bits(double d) {
  uint64_t raw;
  std::memcpy(&raw, &d, sizeof raw);
  return raw;
}

TEST(WatchValues, EachTypeReadsTheBytesItsOwnWay) {
  using format::WatchType;
  const std::vector<std::pair<int64_t, std::string>> none, colors = {{-1, "NONE"}, {5, "GREEN"}};
  EXPECT_EQ(FormatWatchValue(0xff, 1, WatchType::kSigned, none), "-1");
  EXPECT_EQ(FormatWatchValue(0xfffe, 2, WatchType::kSigned, none), "-2");
  EXPECT_EQ(FormatWatchValue(0xffffffff, 4, WatchType::kUnsigned, none), "4294967295");
  EXPECT_EQ(FormatWatchValue(Bits(0.25), 8, WatchType::kFloat, none), "0.25");
  float f = 1.5f;
  uint32_t fbits;
  std::memcpy(&fbits, &f, sizeof fbits);
  EXPECT_EQ(FormatWatchValue(fbits, 4, WatchType::kFloat, none), "1.5");
  EXPECT_EQ(FormatWatchValue(0x7ffd1000, 8, WatchType::kPointer, none), "0x7ffd1000");
  EXPECT_EQ(FormatWatchValue(0xffffffff, 4, WatchType::kEnum, colors), "NONE (-1)");
  EXPECT_EQ(FormatWatchValue(5, 4, WatchType::kEnum, colors), "GREEN (5)");
  EXPECT_EQ(FormatWatchValue(6, 4, WatchType::kEnum, colors), "6");
  EXPECT_EQ(FormatWatchValue(0, 1, WatchType::kBool, none), "false");
  EXPECT_EQ(FormatWatchValue(1, 1, WatchType::kBool, none), "true");
  EXPECT_EQ(FormatWatchValue(2, 1, WatchType::kBool, none), "true (2)");
}

}  // namespace
}  // namespace hotline::model

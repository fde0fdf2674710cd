// Reading the arc counters of a .gcda file (coverage/gcda.h), written here byte by byte as gcc
// 12's runtime writes them: counted and all-zero (negative length) arrays, and damage.
#include "coverage/gcda.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace hotline::coverage {
namespace {

void Word(std::string& out, uint32_t w) { out.append(reinterpret_cast<const char*>(&w), 4); }

std::string Gcda() {
  std::string b;
  for (uint32_t w : {0x67636461u, 0x4232322au, 1u, 2u}) Word(b, w);  // magic, version, stamp, sum
  Word(b, 0xa1000000u);                                              // the object summary
  Word(b, 8);
  Word(b, 1);
  Word(b, 5);
  Word(b, 0x01000000u);  // function 7
  Word(b, 12);
  for (uint32_t w : {7u, 11u, 13u}) Word(b, w);
  Word(b, 0x01a10000u);  // its arcs: 5 and 2^33 + 1
  Word(b, 16);
  for (uint32_t w : {5u, 0u, 1u, 2u}) Word(b, w);
  Word(b, 0x01000000u);  // function 9: three counters, all zero
  Word(b, 12);
  for (uint32_t w : {9u, 11u, 13u}) Word(b, w);
  Word(b, 0x01a10000u);
  Word(b, uint32_t(-24));
  return b;
}

std::string WriteFile(const std::string& bytes) {
  char path[] = "/tmp/hotline-gcda-XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, bytes.data(), bytes.size()), ssize_t(bytes.size()));
  close(fd);
  return path;
}

TEST(Gcda, ReadsEachFunctionsArcCounters) {
  std::string path = WriteFile(Gcda());
  Expected<ArcCounters> counters = ReadGcda(path);
  std::remove(path.c_str());
  ASSERT_TRUE(counters.ok()) << counters.status().message();
  EXPECT_EQ(counters->at(7), (std::vector<uint64_t>{5, (uint64_t{2} << 32) + 1}));
  EXPECT_EQ(counters->at(9), (std::vector<uint64_t>{0, 0, 0}));
}

TEST(Gcda, ATruncatedOrForeignFileIsAnError) {
  std::string whole = Gcda();
  std::string truncated = WriteFile(whole.substr(0, whole.size() - 30));
  std::string foreign = WriteFile("not a gcda file at all");
  EXPECT_FALSE(ReadGcda(truncated).ok());
  EXPECT_FALSE(ReadGcda(foreign).ok());
  EXPECT_FALSE(ReadGcda("/nonexistent/x.gcda").ok());
  std::remove(truncated.c_str());
  std::remove(foreign.c_str());
}

}  // namespace
}  // namespace hotline::coverage

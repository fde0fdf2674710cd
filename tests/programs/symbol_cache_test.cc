// What the symbolizer learned is kept between commands (symbolize/symbol_cache.h): a second
// report of a profile reads the kept answers and says exactly what the first said; a damaged
// cache file is ignored and written anew; HOTLINE_CACHE_DIR=off keeps nothing.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness.h"

namespace hotline {
namespace {

using testing::Hotline;
using testing::RunResult;
using testing::ScratchDir;

std::vector<std::string> Kept(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/symbols", ec))
    files.push_back(entry.path().string());
  return files;
}

TEST(SymbolCache, ASecondReportSaysWhatTheFirstSaid) {
  std::string dir = ScratchDir("symbol-cache");
  std::string cache = dir + "/cache";
  ASSERT_EQ(
      Hotline({"record", "-q", "-o", dir + "/p.hotline", "--", PROGRAM_deep_cpp, "chain", "300"},
              dir)
          .exit_code,
      0);
  setenv("HOTLINE_CACHE_DIR", cache.c_str(), 1);
  RunResult first = Hotline({"report", "-A", "-m", dir + "/p.hotline"}, dir);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::vector<std::string> kept = Kept(cache);
  ASSERT_FALSE(kept.empty()) << "nothing kept in " << cache;
  RunResult second = Hotline({"report", "-A", "-m", dir + "/p.hotline"}, dir);
  EXPECT_EQ(second.out, first.out);
  EXPECT_EQ(second.err, first.err);
  // Damaged: ignored, resolved again, kept anew.
  for (const std::string& file : kept) std::ofstream(file, std::ios::trunc) << "damaged";
  RunResult third = Hotline({"report", "-A", "-m", dir + "/p.hotline"}, dir);
  EXPECT_EQ(third.out, first.out);
  RunResult fourth = Hotline({"report", "-A", "-m", dir + "/p.hotline"}, dir);
  EXPECT_EQ(fourth.out, first.out);
  for (const std::string& file : kept)
    EXPECT_GT(std::filesystem::file_size(file), 7u) << file << " was not written anew";
  // Off: nothing kept, not even where it would go otherwise.
  std::string xdg = dir + "/xdg";
  setenv("XDG_CACHE_HOME", xdg.c_str(), 1);
  setenv("HOTLINE_CACHE_DIR", "off", 1);
  RunResult off = Hotline({"report", "-A", "-m", dir + "/p.hotline"}, dir);
  EXPECT_EQ(off.out, first.out);
  unsetenv("HOTLINE_CACHE_DIR");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_FALSE(std::filesystem::exists(xdg + "/hotline"));
}

}  // namespace
}  // namespace hotline

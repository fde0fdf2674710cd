// The report's own scripts and styles (src/html/assets), embedded in the binary at build time.
#pragma once

#include <span>
#include <string_view>

namespace hotline::html {

struct Asset {
  const char* name;  // the file name it gets in the report's directory
  std::string_view bytes;
};

std::span<const Asset> Assets();

}  // namespace hotline::html

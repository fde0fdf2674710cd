// Text with its control characters in TeX's caret notation (a CR is ^^M, DEL ^^?), for names
// that must stay on one line: a TeX control sequence as TeX shows it, a frame in a line-based
// export.
#pragma once

#include <string>
#include <string_view>

namespace hotline::base {

inline std::string CaretNotation(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      out += "^^";
      out += char(c ^ 0x40);
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace hotline::base

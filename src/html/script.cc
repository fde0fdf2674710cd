#include <string>

#include "html/parts.h"

namespace hotline::html {

std::string DataScript(std::string_view key, const nlohmann::json& value) {
  // Invalid UTF-8 (a source in Latin-1) becomes U+FFFD instead of failing the report.
  std::string json = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out = "(window.HOTLINE = window.HOTLINE || {})[";
  out += nlohmann::json(std::string(key)).dump();
  out += "] = ";
  out.reserve(out.size() + json.size() + 16);
  // These characters only occur inside JSON strings, where the escapes mean the same: no
  // `</script>`, `<!--` or entity can form in the script's text.
  for (char c : json) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += c;
    }
  }
  out += ";\n";
  return out;
}

}  // namespace hotline::html

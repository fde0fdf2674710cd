#include "history/database.h"

#include <cstdlib>

namespace hotline::history {

Expected<std::unique_ptr<Database>> Connect(const std::string& where) {
  if (where.starts_with("postgresql://") || where.starts_with("postgres://"))
    return ConnectPostgres(where);
  return ConnectSqlite(where);
}

int64_t Integer(const std::optional<std::string>& text) {
  return text ? std::strtoll(text->c_str(), nullptr, 10) : 0;
}

double Real(const std::optional<std::string>& text) {
  return text ? std::strtod(text->c_str(), nullptr) : 0;
}

}  // namespace hotline::history

// Where `hotline history`, `check` and `html --history` find the run database: the --db option.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace hotline::cli {

struct HistoryLocation {
  std::string db;  // --db: a path or a postgresql:// URL; else $HOTLINE_DB; else the default

  void Register(CLI::App& cmd);
};

}  // namespace hotline::cli

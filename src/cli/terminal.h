// What the terminal gets: colours or not, for report and annotate.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace hotline::cli {

// Adds --color=auto|always|never to `cmd`, storing the choice in `mode`.
void AddColorOption(CLI::App& cmd, std::string& mode);

// Whether to colour: `always`; never for `never`; for `auto`, when stdout is a terminal, NO_COLOR
// is unset (or empty) and TERM is not `dumb`.
bool UseColor(const std::string& mode);

// The width of the terminal stdout is, in columns; 0 when it is not one.
uint32_t TerminalWidth();

}  // namespace hotline::cli

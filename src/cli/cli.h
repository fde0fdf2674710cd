// The one boundary where Status becomes a message and an exit code (DESIGN.md rule 5).
// main() only calls RunCli; tests call it in-process.
#pragma once

namespace hotline::cli {

// Parses argv and runs the subcommand. Returns the process exit code. Errors are printed to
// stderr as one line: "hotline: <what is wrong>".
int RunCli(int argc, char** argv);

}  // namespace hotline::cli

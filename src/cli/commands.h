// Each subcommand lives in a file of its own (<name>_command.cc) with its own options struct,
// and registers itself on the CLI11 app here. A subcommand's callback stores its exit code in
// *exit_code.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace hotline::cli {

void RegisterRecordCommand(CLI::App& app, int* exit_code);
void RegisterDumpCommand(CLI::App& app, int* exit_code);
void RegisterReportCommand(CLI::App& app, int* exit_code);
void RegisterAnnotateCommand(CLI::App& app, int* exit_code);
void RegisterMergeCommand(CLI::App& app, int* exit_code);
void RegisterDiffCommand(CLI::App& app, int* exit_code);
void RegisterHtmlCommand(CLI::App& app, int* exit_code);
void RegisterExportCommand(CLI::App& app, int* exit_code);
void RegisterHistoryCommand(CLI::App& app, int* exit_code);
void RegisterCheckCommand(CLI::App& app, int* exit_code);
void RegisterSweepCommand(CLI::App& app, int* exit_code);
void RegisterTexCommand(CLI::App& app, int* exit_code);

// A number above 0, said so in words when it is not (CLI's PositiveNumber prints DBL_MAX).
CLI::Validator Positive();

// `hotline record` hands everything from the program's name on (or after `--`) to the program
// untouched, so it is split off before CLI11 parses. Returns how many of argv CLI11 should see.
int TakeRecordProgram(CLI::App& app, int argc, char** argv);
// The words after the first `--` of argv (from argv[2] on) appended to `command`; returns the
// index of that `--`, or argc when there is none.
int TakeAfterSeparator(int argc, char** argv, std::vector<std::string>& command);
// The same for `hotline sweep`, whose program comes after `--`.
int TakeSweepProgram(int argc, char** argv);
// `hotline tex` takes the TeX command line after `--` the same way.
int TakeTexCommand(int argc, char** argv);

}  // namespace hotline::cli

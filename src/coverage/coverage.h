// Exact execution counts from the compilers' coverage instrumentation, for `hotline record`:
// gcc's --coverage (read with gcov) and clang's -fprofile-instr-generate -fcoverage-mapping (read
// with llvm-profdata and llvm-cov).
//
// Before the run, PrepareCoverageRun() makes a private directory and says which environment
// variables send the program's .gcda files there (GCOV_PREFIX), so the user's own .gcda files
// are left exactly as they were. After the run, CollectCoverage() pairs each .gcda with the .gcno
// the compiler left beside the object file, runs `gcov --json-format --stdout` on it and reads
// the counts; AppendCoverage() adds them to the profile and removes the directory.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "coverage/instruction_counts.h"

namespace hotline::coverage {

enum class CoverageKind { kNone, kGcc, kClang };

struct CoveragePlan {
  bool enabled = false;  // the program carries coverage instrumentation
  CoverageKind kind = CoverageKind::kNone;
  std::string program;
  std::string directory;  // where its .gcda files go during the run
  std::vector<std::pair<std::string, std::string>> environment;  // to set for the program
};

struct FileCounts {
  std::string path;                                  // absolute
  std::vector<std::pair<uint64_t, uint64_t>> lines;  // (line, executions), ascending
};

struct FunctionCounts {
  std::string file, name;  // name demangled
  uint64_t start_line = 0, end_line = 0, executions = 0;
};

struct CoverageData {
  std::vector<FileCounts> files;
  std::vector<FunctionCounts> functions;
  InstructionCounts instructions;  // gcc's: the program's, from its block counters
  std::string instructions_note;   // what the reader should know of them, or why there are none
};

// Looks for gcov's (__gcov_*) or clang's (__llvm_profile_*) runtime in the program. A program
// without it gets a plan that is not enabled; that is not an error.
Expected<CoveragePlan> PrepareCoverageRun(const std::string& program_path);

// Reads the counts the run left in plan.directory.
Expected<CoverageData> CollectCoverage(const CoveragePlan& plan);

// Appends the counts to the profile at `path`, naming `module` (the program) as their binary.
Status AppendCoverage(const std::string& path, const std::string& module, const CoverageData& data);

// Removes the plan's directory and everything in it.
void RemoveCoverageDirectory(const CoveragePlan& plan);

}  // namespace hotline::coverage

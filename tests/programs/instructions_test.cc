// Instructions executed (callgrind's Ir), counted from a --coverage build's block counters,
// against callgrind on the same binary and input (issue 30): per function and per line, every
// one above 1% of the program's instructions. Where the counters determine every block (C, a
// recursive program and Fortran at -O1 -fno-tree-ch, Lua at -O2), the counts equal callgrind's
// but for the dynamic linker's lazy binding (a few instructions at an imported function's first
// call, which callgrind charges to the caller). Where they do not (C++ at -O2: copies inlined
// after the counters were placed share them), callgrind's count lies in hotline's range.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace hotline {
namespace {

using testing::Execute;
using testing::Hotline;
using testing::Installed;
using testing::Load;
using testing::RunResult;
using testing::ScratchDir;

// A callgrind file written with --compress-strings=no --compress-pos=no: the self cost of each
// function and of each (file name, line), in the object whose path ends with `object`. Lines
// are keyed by the file's name alone: valgrind joins clang's absolute file names to the
// compilation directory once more.
struct Callgrind {
  std::map<std::string, uint64_t> functions;
  std::map<std::pair<std::string, uint64_t>, uint64_t> lines;
  uint64_t total = 0;  // in the object
  uint64_t all = 0;    // everywhere
};

Callgrind ReadCallgrind(const std::string& path, const std::string& object) {
  Callgrind cg;
  std::ifstream in(path);
  std::string ob, file, fn;
  bool call_cost = false;
  for (std::string line; std::getline(in, line);) {
    auto value = [&](size_t skip) { return line.substr(skip); };
    if (line.rfind("ob=", 0) == 0) {
      ob = value(3);
    } else if (line.rfind("fl=", 0) == 0 || line.rfind("fi=", 0) == 0 ||
               line.rfind("fe=", 0) == 0) {
      file = std::filesystem::path(value(3)).lexically_normal().string();
    } else if (line.rfind("fn=", 0) == 0) {
      fn = value(3);
      if (size_t tick = fn.rfind('\'');
          tick != std::string::npos &&
          fn.find_first_not_of("0123456789", tick + 1) == std::string::npos)
        fn.resize(tick);  // a recursion level: fib'2
    } else if (line.rfind("calls=", 0) == 0) {
      call_cost = true;  // the next cost line is the call's inclusive cost
    } else if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0]))) {
      if (call_cost) {
        call_cost = false;
        continue;
      }
      uint64_t number = 0, ir = 0;
      if (std::sscanf(line.c_str(), "%lu %lu", &number, &ir) != 2) continue;
      cg.all += ir;
      if (ob.size() < object.size() || ob.compare(ob.size() - object.size(), object.size(), object))
        continue;
      cg.functions[fn] += ir;
      cg.lines[{std::filesystem::path(file).filename().string(), number}] += ir;
      cg.total += ir;
    }
  }
  return cg;
}

struct Counted {
  uint64_t executed = 0, uncounted = 0;
  bool unbounded = false;
};

// Lazy binding: an imported function's first call runs a few instructions of the PLT's
// resolver path that callgrind charges to the calling function (4 on this machine).
constexpr uint64_t kSlack = 64;

// Compiles `source` with the compiler and flags in `compile` and the coverage flags (gcc's by
// default) into `program`, run in `dir`.
const std::vector<std::string> kGcc = {"--coverage", "-fprofile-update=atomic"};
const std::vector<std::string> kClang = {"-fprofile-instr-generate", "-fcoverage-mapping",
                                         "-fprofile-update=atomic"};

void BuildCounted(const std::string& dir, std::vector<std::string> compile,
                  const std::string& program, const std::string& source,
                  const std::vector<std::string>& coverage = kGcc) {
  compile.insert(compile.begin(), "/usr/bin/env");
  compile.insert(compile.end(), coverage.begin(), coverage.end());
  compile.insert(compile.end(), {"-g", "-o", program, source});
  RunResult built = Execute(compile, dir);
  ASSERT_EQ(built.exit_code, 0) << built.err;
}

// `hotline record -q --counts-only -o PROFILE -- COMMAND...` in `dir`.
RunResult RecordCounts(const std::string& dir, const std::string& profile,
                       const std::vector<std::string>& command) {
  std::vector<std::string> args = {"record", "-q", "--counts-only", "-o", profile, "--"};
  args.insert(args.end(), command.begin(), command.end());
  return Hotline(args, dir);
}

// Compares the profile's instruction counts with callgrind's and prints the table the closing
// note quotes. Callgrind's count of every function and line above 1% lies in hotline's range;
// `exact`: that range is within 1% of it.
void Compare(const std::string& name, const std::string& object, const std::string& profile,
             const std::string& callgrind, bool exact) {
  format::RawProfile raw = Load(profile);
  for (const std::string& note : raw.notes)
    EXPECT_EQ(note.find("could not be followed"), std::string::npos) << note;
  std::map<std::string, Counted> functions;
  for (const format::RawFunctionInstructions& f : raw.function_instructions) {
    Counted& c = functions[f.name];
    c.executed += f.executed;
    c.uncounted += f.uncounted;
    c.unbounded |= f.unbounded;
  }
  std::map<std::pair<std::string, uint64_t>, Counted> lines;
  for (const format::RawLineInstructions& f : raw.line_instructions)
    for (const format::RawLineInstructions::Row& row : f.lines) {
      Counted& c = lines[{std::filesystem::path(f.file).filename().string(), row.line}];
      c.executed += row.executed;
      c.uncounted += row.uncounted;
      c.unbounded |= row.unbounded;
    }
  Callgrind cg = ReadCallgrind(callgrind, object);
  ASSERT_GT(cg.total, 0u) << "callgrind counted nothing in " << object;
  uint64_t ours = 0, uncounted = 0;
  for (const auto& [fn, c] : functions) ours += c.executed, uncounted += c.uncounted;
  std::printf(
      "%s: callgrind %lu instructions in the program (%lu in all), hotline %lu counted "
      "+ at most %lu uncounted\n",
      name.c_str(), cg.total, cg.all, ours, uncounted);
  auto check = [&](const std::string& what, uint64_t truth, const Counted* c) {
    ASSERT_NE(c, nullptr) << what << ": hotline has no count; callgrind " << truth;
    EXPECT_FALSE(c->unbounded) << what;
    EXPECT_LE(c->executed, truth + kSlack) << what;
    EXPECT_LE(truth, c->executed + c->uncounted + kSlack) << what;
    if (exact) {  // the range is within 1%: so is any count in it
      EXPECT_LE(double(c->uncounted), 0.01 * double(truth)) << what;
      EXPECT_LE(double(truth) - double(c->executed), 0.01 * double(truth)) << what;
    }
  };
  std::printf("  %-60s %14s %14s %12s\n", "function (above 1%)", "callgrind Ir", "hotline",
              "uncounted");
  for (const auto& [fn, truth] : cg.functions) {
    if (truth * 100 < cg.total) continue;
    auto it = functions.find(fn);
    std::printf("  %-60s %14lu %14lu %12lu\n", fn.substr(0, 60).c_str(), truth,
                it == functions.end() ? 0 : it->second.executed,
                it == functions.end() ? 0 : it->second.uncounted);
    check(fn, truth, it == functions.end() ? nullptr : &it->second);
  }
  size_t shown = 0;
  for (const auto& [at, truth] : cg.lines) {
    // Line 0: code no line owns (clang's counters), which no listing shows.
    if (truth * 100 < cg.total || at.second == 0) continue;
    ++shown;
    auto it = lines.find(at);
    check(at.first + ":" + std::to_string(at.second), truth,
          it == lines.end() ? nullptr : &it->second);
  }
  EXPECT_GT(shown, 0u);
}

// Builds `source` with `compile` (compiler and flags; the coverage flags are added), records it
// with --counts-only, runs it under callgrind, and compares.
void ExpectCallgrindsCounts(const std::string& name, const std::vector<std::string>& compile,
                            const std::string& source, bool exact,
                            const std::vector<std::string>& coverage = kGcc) {
  if (!Installed("valgrind")) GTEST_SKIP() << "valgrind (Debian's) is not installed";
  std::string dir = ScratchDir("instructions-" + name);
  std::string program = dir + "/" + name;
  BuildCounted(dir, compile, program, source, coverage);
  RunResult recorded = RecordCounts(dir, dir + "/p.hotline", {program});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  RunResult grind =
      Execute({"/usr/bin/env", "valgrind", "--tool=callgrind", "--compress-strings=no",
               "--compress-pos=no", "--callgrind-out-file=" + dir + "/cg.out", program},
              dir);
  ASSERT_EQ(grind.exit_code, 0) << grind.err;
  EXPECT_EQ(grind.out, recorded.out);
  Compare(name, "/" + name, dir + "/p.hotline", dir + "/cg.out", exact);
}

// callgrind_annotate's table of functions (file:function [object]), summed over recursion levels.
std::map<std::string, uint64_t> AnnotatedFunctions(const std::string& file,
                                                   const std::string& dir) {
  RunResult r = Execute({"/usr/bin/env", "callgrind_annotate", "--threshold=100", file}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, uint64_t> functions;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    size_t open = line.find(" ("), colon = line.find(':'), bracket = line.find(" [");
    if (open == std::string::npos || colon == std::string::npos || bracket == std::string::npos ||
        colon > bracket)
      continue;
    std::string number = line.substr(0, open);
    number.erase(
        std::remove_if(number.begin(), number.end(), [](char c) { return c == ',' || c == ' '; }),
        number.end());
    std::string name = line.substr(colon + 1, bracket - colon - 1);
    if (size_t tick = name.rfind('\''); tick != std::string::npos) name.resize(tick);
    if (!number.empty() && number.find_first_not_of("0123456789") == std::string::npos)
      functions[name] += std::stoull(number);
  }
  return functions;
}

// The export is read by callgrind_annotate, which shows callgrind's own numbers for it.
TEST(Instructions, CallgrindAnnotateReadsTheExportAsCallgrindsOwn) {
  if (!Installed("valgrind")) GTEST_SKIP() << "valgrind (Debian's) is not installed";
  std::string dir = ScratchDir("instructions-export");
  std::string program = dir + "/prog";
  BuildCounted(dir, {"gcc", "-O1", "-fno-tree-ch"}, program, SOURCE_instructions_c);
  ASSERT_EQ(RecordCounts(dir, dir + "/p.hotline", {program}).exit_code, 0);
  ASSERT_EQ(Hotline({"export", "-f", "callgrind", "-o", dir + "/ours.out", dir + "/p.hotline"}, dir)
                .exit_code,
            0);
  ASSERT_EQ(Execute({"/usr/bin/env", "valgrind", "--tool=callgrind",
                     "--callgrind-out-file=" + dir + "/theirs.out", program},
                    dir)
                .exit_code,
            0);
  std::map<std::string, uint64_t> ours = AnnotatedFunctions(dir + "/ours.out", dir);
  std::map<std::string, uint64_t> theirs = AnnotatedFunctions(dir + "/theirs.out", dir);
  ASSERT_FALSE(theirs.empty());
  for (const char* fn : {"main", "insertion_sort", "collatz", "walk", "mix"}) {
    if (!theirs.count(fn)) continue;  // inlined into main
    EXPECT_NEAR(double(ours[fn]), double(theirs[fn]), kSlack) << fn;
  }
  EXPECT_NEAR(double(ours["main"]), double(theirs["main"]), kSlack);
}

// `gcc ../src/x.c`: the line table names the source relative to where gcc ran; its counts are
// filed under the source's absolute path, the one gcov's line counts have, so that the
// listing puts them on its lines.
TEST(Instructions, ASourceNamedRelativeToTheBuildKeepsItsCounts) {
  std::string dir = ScratchDir("instructions-relative");
  std::filesystem::create_directories(dir + "/src");
  std::filesystem::create_directories(dir + "/build");
  std::filesystem::copy_file(SOURCE_instructions_c, dir + "/src/x.c");
  BuildCounted(dir + "/build", {"gcc", "-O1"}, "prog", "../src/x.c");
  ASSERT_EQ(RecordCounts(dir + "/build", dir + "/p.hotline", {"./prog"}).exit_code, 0);
  format::RawProfile raw = Load(dir + "/p.hotline");
  std::string source = std::filesystem::path(dir + "/src/x.c").lexically_normal().string();
  bool found = false;
  for (const format::RawLineInstructions& f : raw.line_instructions) found |= f.file == source;
  EXPECT_TRUE(found) << source;
  RunResult listing = Hotline({"annotate", "--no-color", dir + "/p.hotline"}, dir + "/build");
  ASSERT_EQ(listing.exit_code, 0) << listing.err;
  // The Collatz loop's test, with its count and its instructions.
  std::istringstream rows(listing.out);
  bool costed = false;
  for (std::string row; std::getline(rows, row);)
    if (row.find("while (x != 1)") != std::string::npos) {
      std::istringstream fields(row);
      uint64_t number = 0, count = 0, cost = 0;
      costed = bool(fields >> number >> count >> cost) && cost > count;
    }
  EXPECT_TRUE(costed) << listing.out;
}

// SOKRAT's procedure table of a counts-only profile: each function's instructions, its own
// (the profile's count) and with its callees (main: everything counted).
TEST(Instructions, ProceduresShowTheInstructionsEachExecuted) {
  std::string dir = ScratchDir("instructions-procedures");
  std::string program = dir + "/prog";
  BuildCounted(dir, {"gcc", "-O1", "-fno-tree-ch", "-fno-inline"}, program, SOURCE_instructions_c);
  ASSERT_EQ(RecordCounts(dir, dir + "/p.hotline", {program}).exit_code, 0);
  format::RawProfile raw = Load(dir + "/p.hotline");
  std::map<std::string, uint64_t> counted;
  uint64_t total = 0;
  for (const format::RawFunctionInstructions& f : raw.function_instructions) {
    counted[f.name] += f.executed;
    total += f.executed;
  }
  RunResult r = Hotline({"report", "-P", "-m", dir + "/p.hotline"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::pair<uint64_t, uint64_t>> rows;  // name → (total, self)
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, '\t');) cells.push_back(cell);
    if (cells.size() == 7) rows[cells[6]] = {std::stoull(cells[1]), std::stoull(cells[2])};
  }
  for (const char* fn : {"insertion_sort", "collatz", "walk", "mix", "main"}) {
    ASSERT_TRUE(rows.count(fn)) << fn << "\n" << r.out;
    EXPECT_EQ(rows[fn].second, counted[fn]) << fn;
  }
  EXPECT_EQ(rows["main"].first, total);
  // A recursion is charged once, not once per level: walk calls only itself.
  EXPECT_NEAR(double(rows["walk"].first), double(rows["walk"].second), 1.0);
}

// diff of two counts-only profiles: exact instruction counts, so the rows are the changes and
// their numbers the profiles' own; a function that ran alike in both is not a row.
TEST(Instructions, DiffShowsExactlyWhatChanged) {
  std::string dir = ScratchDir("instructions-diff");
  std::string program = dir + "/prog";
  BuildCounted(dir, {"gcc", "-O1", "-fno-inline"}, program, SOURCE_instructions_c);
  for (const char* n : {"2000", "3000"})
    ASSERT_EQ(RecordCounts(dir, dir + "/" + n + ".hotline", {program, n}).exit_code, 0);
  auto counted = [&](const std::string& n) {
    std::map<std::string, uint64_t> by_name;
    for (const format::RawFunctionInstructions& f :
         Load(dir + "/" + n + ".hotline").function_instructions)
      by_name[f.name] += f.executed;
    return by_name;
  };
  std::map<std::string, uint64_t> before = counted("2000"), after = counted("3000");
  RunResult r = Hotline({"diff", "-m", dir + "/2000.hotline", dir + "/3000.hotline"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::pair<uint64_t, uint64_t>> rows;
  std::istringstream lines(r.out);
  bool in_functions = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# ", 0) == 0) in_functions = line == "# self";
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, '\t');) cells.push_back(cell);
    if (in_functions && cells.size() == 6)
      rows[cells[5]] = {std::stoull(cells[0]), std::stoull(cells[1])};
  }
  // The sort's work grows with n; the other functions' does not.
  ASSERT_TRUE(rows.count("insertion_sort")) << r.out;
  EXPECT_EQ(rows["insertion_sort"],
            std::make_pair(before["insertion_sort"], after["insertion_sort"]));
  EXPECT_GT(after["insertion_sort"], before["insertion_sort"]);
  EXPECT_EQ(rows.count("collatz"), 0u) << r.out;
  EXPECT_EQ(before["collatz"], after["collatz"]);
}

// A program also built with -finstrument-functions: its calls are counted, so each caller's
// total holds exactly the calls it made (100 and 500 of 600), not what its lines suggest.
TEST(Instructions, TracedCallsChargeEachCallerItsOwnCalls) {
  std::string dir = ScratchDir("instructions-calls");
  std::string program = dir + "/prog";
  BuildCounted(dir, {"gcc", "-O1", "-fno-tree-ch", "-finstrument-functions"}, program,
               SOURCE_instructions_calls);
  ASSERT_EQ(RecordCounts(dir, dir + "/p.hotline", {program}).exit_code, 0);
  RunResult r = Hotline({"report", "-P", "-m", dir + "/p.hotline"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::vector<uint64_t>> rows;  // name → calls, total, self
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, '\t');) cells.push_back(cell);
    if (cells.size() == 7)
      rows[cells[6]] = {std::stoull(cells[0]), std::stoull(cells[1]), std::stoull(cells[2])};
  }
  ASSERT_TRUE(rows.count("heavy") && rows.count("rare") && rows.count("often")) << r.out;
  ASSERT_EQ(rows["heavy"][0], 600u);
  double per_call = double(rows["heavy"][2]) / 600;
  EXPECT_NEAR(double(rows["rare"][1]), double(rows["rare"][2]) + 100 * per_call, 1.0);
  EXPECT_NEAR(double(rows["often"][1]), double(rows["often"][2]) + 500 * per_call, 1.0);
}

TEST(Instructions, CEqualsCallgrind) {
  ExpectCallgrindsCounts("instructions_c", {"gcc", "-O1", "-fno-tree-ch"}, SOURCE_instructions_c,
                         true);
}

// clang's counters (-fprofile-instr-generate), read from the run's raw profile. LLVM rotates
// loops after placing them, as gcc copies loop headers: a line may be known only within a
// range (the one-line `mix`, 1.5% wide here), and callgrind's count is in it.
TEST(Instructions, ClangIsWithinItsRange) {
  if (!Installed("clang")) GTEST_SKIP() << "clang is not installed";
  ExpectCallgrindsCounts("instructions_clang", {"clang", "-O1"}, SOURCE_instructions_c, false,
                         kClang);
}

TEST(Instructions, RecursionEqualsCallgrind) {
  ExpectCallgrindsCounts("instructions_recursive", {"gcc", "-O1", "-fno-tree-ch"},
                         SOURCE_instructions_recursive, true);
}

TEST(Instructions, FortranEqualsCallgrind) {
  if (!Installed("gfortran")) GTEST_SKIP() << "gfortran is not installed";
  ExpectCallgrindsCounts("instructions_f90", {"gfortran", "-O1", "-fno-tree-ch"},
                         SOURCE_instructions_f90, true);
}

// -O2 C++: the standard library's templates inlined after the counters were placed share them
// between their copies, so some blocks are known only within a range; callgrind's count is in it.
TEST(Instructions, CxxAtO2IsWithinItsRange) {
  ExpectCallgrindsCounts("instructions_cpp", {"g++", "-O2"}, SOURCE_instructions_cpp, false);
}

// Lua 5.4 from Debian's source package, at -O2 (bench/lua-source.sh), running
// bench/programs/sorts_formats.lua of table sorts, string formatting and pattern matching.
TEST(Instructions, LuaEqualsCallgrind) {
  if (!Installed("valgrind")) GTEST_SKIP() << "valgrind (Debian's) is not installed";
  std::string dir = ScratchDir("instructions-lua");
  RunResult built =
      Execute({"/usr/bin/env", "bash", std::string(HOTLINE_SOURCE_DIR) + "/bench/lua-source.sh",
               dir + "/build",
               // Lua seeds its string hashes and picks its sort's pivots with the
               // time (and addresses): fixed, both runs run the same instructions.
               "--coverage -fprofile-update=atomic -Dluai_makeseed(L)=0 "
               "-Dl_randomizePivot()=0"},
              dir);
  if (built.exit_code != 0) GTEST_SKIP() << "Lua's source package cannot be had: " << built.err;
  std::string lua = dir + "/build/lua";
  std::string script = std::string(HOTLINE_SOURCE_DIR) + "/bench/programs/sorts_formats.lua";
  RunResult recorded = RecordCounts(dir, dir + "/p.hotline", {lua, script, "20000", "20"});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  RunResult grind = Execute(
      {"/usr/bin/env", "valgrind", "--tool=callgrind", "--compress-strings=no", "--compress-pos=no",
       "--callgrind-out-file=" + dir + "/cg.out", lua, script, "20000", "20"},
      dir);
  ASSERT_EQ(grind.exit_code, 0) << grind.err;
  EXPECT_EQ(grind.out, recorded.out);
  Compare("lua", "/lua", dir + "/p.hotline", dir + "/cg.out", true);
}

}  // namespace
}  // namespace hotline

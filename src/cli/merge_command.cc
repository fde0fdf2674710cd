// `hotline merge A B ... -o OUT`: several runs in one file, which every command reads as their
// sum (docs/report.md, "Several runs as one").
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "cli/commands.h"
#include "cli/profile_path.h"
#include "export/export.h"
#include "record/profiles.h"
#include "format/reader.h"

namespace hotline::cli {
namespace {

struct MergeCommandOptions {
  std::vector<std::string> files;
  std::string output;
  bool force = false;
  bool children = false;

  void Register(CLI::App& cmd) {
    cmd.add_option("-o,--output", output, "the merged profile to write")->required();
    cmd.add_flag("--force", force, "merge runs of different programs too");
    cmd.add_flag("--children", children,
                 "each FILE with the profiles its run's forked children wrote beside it "
                 "(FILE's BASE.PID[.N].hotline); children that ran another program are left "
                 "out unless --force");
    cmd.add_option("FILE", files, "the runs' profiles (each may itself hold merged runs)")
        ->required();
  }
};

// The program of a run, from its process record (which names it by a string written before).
class Program : public format::RecordVisitor {
 public:
  void onString(const format::StringRecord& r) override {
    strings_[r.id] = std::string(r.text, r.size);
  }
  void onProcess(const format::ProcessRecord& r) override {
    if (auto it = strings_.find(r.exe); it != strings_.end()) exe = it->second;
  }
  std::string exe;

 private:
  std::unordered_map<uint64_t, std::string> strings_;
};

Expected<std::vector<std::string>> ProgramsOf(const std::string& path) {
  std::vector<std::string> programs;
  for (uint64_t offset = 0;;) {
    Program visitor;
    format::ReadStats stats;
    Status status = format::ReadProfileFile(path, visitor, &stats, offset);
    if (!status.ok()) return status;
    programs.push_back(visitor.exe);
    offset = stats.next_run;
    if (offset == 0) return programs;
  }
}

int RunMerge(MergeCommandOptions& o) {
  std::vector<std::string> inputs;
  for (const std::string& file : o.files) {
    inputs.push_back(file);
    if (o.children)
      for (const std::string& child : record::ChildProfilePaths(file, 0)) inputs.push_back(child);
  }
  std::error_code ec;
  std::vector<std::string> merged;
  std::string program;
  size_t runs = 0;
  for (const std::string& input : inputs) {
    if (std::filesystem::equivalent(input, o.output, ec)) {
      fmt::print(stderr, "hotline: merge: {} is both a FILE and the output\n", input);
      return 2;
    }
    Expected<std::vector<std::string>> programs = ProgramsOf(input);
    if (!programs) {
      fmt::print(stderr, "hotline: merge: {}\n", programs.status().message());
      return 1;
    }
    if (program.empty()) program = programs->front();
    bool other = false;
    for (const std::string& p : *programs) other = other || p != program;
    if (other && !o.force) {
      bool child = std::find(o.files.begin(), o.files.end(), input) == o.files.end();
      if (child) {
        fmt::print(stderr, "hotline: note: merge: {} left out: a child that ran another program\n",
                   input);
        continue;
      }
      fmt::print(stderr,
                 "hotline: merge: {} is a profile of another program than {}; --force merges "
                 "them anyway\n",
                 input, program);
      return 1;
    }
    merged.push_back(input);
    runs += programs->size();
  }
  if (Status s = WriteConcatenation(merged, o.output); !s.ok()) {
    fmt::print(stderr, "hotline: merge: {}\n", s.message());
    return 1;
  }
  fmt::print(stderr, "hotline: merged {} run{} of {} into {}\n", runs, runs == 1 ? "" : "s",
             program, o.output);
  return 0;
}

}  // namespace

void RegisterMergeCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<MergeCommandOptions>();
  CLI::App* cmd =
      app.add_subcommand("merge", "several runs of one program in one profile, read as their sum");
  options->Register(*cmd);
  cmd->callback([options, exit_code] { *exit_code = RunMerge(*options); });
}

}  // namespace hotline::cli

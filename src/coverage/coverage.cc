#include "coverage/coverage.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/subprocess.h"
#include "format/writer.h"

namespace hotline::coverage {
namespace fs = std::filesystem;
namespace {

// Which coverage runtime the program carries: gcc's gcov (__gcov_*) or clang's
// -fprofile-instr-generate (__llvm_profile_*).
CoverageKind InstrumentationOf(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return CoverageKind::kNone;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  CoverageKind found = CoverageKind::kNone;
  Elf_Scn* scn = nullptr;
  while (elf && found == CoverageKind::kNone && (scn = elf_nextscn(elf, scn))) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
        sh.sh_entsize == 0)
      continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize && found == CoverageKind::kNone;
         ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, int(i), &sym) || sym.st_shndx == SHN_UNDEF) continue;
      const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
      if (name && std::strncmp(name, "__gcov_", 7) == 0) found = CoverageKind::kGcc;
      if (name && std::strncmp(name, "__llvm_profile_", 15) == 0) found = CoverageKind::kClang;
    }
  }
  if (elf) elf_end(elf);
  close(fd);
  return found;
}

std::string Absolute(const std::string& file, const std::string& cwd) {
  fs::path p(file);
  if (p.is_relative()) p = fs::path(cwd) / p;
  return p.lexically_normal().string();
}

}  // namespace

Expected<CoveragePlan> PrepareCoverageRun(const std::string& program_path) {
  CoveragePlan plan;
  plan.kind = InstrumentationOf(program_path);
  if (plan.kind == CoverageKind::kNone) return plan;
  std::error_code ec;
  plan.program = fs::absolute(program_path, ec).string();  // llvm-cov runs elsewhere
  const char* tmp = getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/hotline-gcda-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data()))
    return Status::Error("cannot make a directory for the coverage counts: " +
                         std::string(std::strerror(errno)));
  plan.enabled = true;
  plan.directory = buf.data();
  if (plan.kind == CoverageKind::kGcc) {
    // gcov's runtime writes /ORIGINAL/PATH/x.gcda as $GCOV_PREFIX/ORIGINAL/PATH/x.gcda.
    plan.environment = {{"GCOV_PREFIX", plan.directory}, {"GCOV_PREFIX_STRIP", "0"}};
  } else {
    // One raw profile per process (%p), merged after the run.
    plan.environment = {{"LLVM_PROFILE_FILE", plan.directory + "/%p.profraw"}};
  }
  return plan;
}

namespace {

// What a reader of the instruction counts should know: the counters' own share, and the
// functions whose code could not be followed, with the remedy.
std::string InstructionsNote(const InstructionCounts& counts) {
  uint64_t executed = 0;
  for (const FunctionInstructions& f : counts.functions) executed += f.executed;
  size_t n = counts.functions.size();
  std::string note = "instruction counts from the block counters of " + std::to_string(n) +
                     (n == 1 ? " function: " : " functions: ") + std::to_string(executed) +
                     " instructions, of which " + std::to_string(counts.counter_increments) +
                     " are the counters' own; code without counters (the libraries, the dynamic "
                     "loader, the coverage runtime) is not counted";
  if (!counts.not_counted.empty()) {
    size_t missed = counts.not_counted.size();
    note += "; not counted, their code could not be followed (" + std::to_string(missed) +
            (missed == 1 ? " function: " : " functions: ");
    for (size_t i = 0; i < counts.not_counted.size() && i < 5; ++i)
      note += (i ? ", " : "") + counts.not_counted[i];
    if (counts.not_counted.size() > 5) note += ", ...";
    note += "); build with -fprofile-update=atomic so that counters stay in memory";
  }
  return note;
}

// clang: llvm-profdata merges the raw profiles, llvm-cov exports them as lcov text; the
// instruction counts come from the raw profiles themselves.
Expected<CoverageData> CollectLlvm(const CoveragePlan& plan) {
  CoverageData data;
  std::vector<std::string> merge = {"llvm-profdata", "merge", "-o",
                                    plan.directory + "/merged.profdata"};
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(plan.directory, ec))
    if (entry.path().extension() == ".profraw") merge.push_back(entry.path().string());
  if (merge.size() == 4) return data;  // the program wrote no profile (it crashed, say)
  std::string ignored;
  if (base::Capture(merge, plan.directory, &ignored) != 0)
    return Status::Error("llvm-profdata merge failed");
  std::string lcov;
  if (base::Capture({"llvm-cov", "export", "-format=lcov", "-instr-profile",
                     plan.directory + "/merged.profdata", plan.program},
                    plan.directory, &lcov) != 0)
    return Status::Error("llvm-cov export failed");
  FileCounts* file = nullptr;
  std::map<std::string, uint64_t> function_lines;
  size_t start = 0;
  while (start < lcov.size()) {
    size_t end = lcov.find('\n', start);
    if (end == std::string::npos) end = lcov.size();
    std::string line = lcov.substr(start, end - start);
    start = end + 1;
    if (line.rfind("SF:", 0) == 0) {
      data.files.push_back(FileCounts{line.substr(3), {}});
      file = &data.files.back();
      function_lines.clear();
    } else if (file && line.rfind("DA:", 0) == 0) {
      uint64_t number = std::strtoull(line.c_str() + 3, nullptr, 10);
      size_t comma = line.find(',');
      if (comma != std::string::npos)
        file->lines.emplace_back(number, std::strtoull(line.c_str() + comma + 1, nullptr, 10));
    } else if (file && line.rfind("FN:", 0) == 0) {
      size_t comma = line.find(',');
      if (comma != std::string::npos)
        function_lines[line.substr(comma + 1)] = std::strtoull(line.c_str() + 3, nullptr, 10);
    } else if (file && line.rfind("FNDA:", 0) == 0) {
      size_t comma = line.find(',');
      if (comma == std::string::npos) continue;
      std::string name = line.substr(comma + 1);
      uint64_t first = function_lines.count(name) ? function_lines[name] : 0;
      // clang names static functions "file.c:name".
      std::string prefix = fs::path(file->path).filename().string() + ":";
      if (name.rfind(prefix, 0) == 0) name.erase(0, prefix.size());
      data.functions.push_back(FunctionCounts{file->path, name, first, first,
                                              std::strtoull(line.c_str() + 5, nullptr, 10)});
    }
  }
  for (FileCounts& f : data.files) std::sort(f.lines.begin(), f.lines.end());
  std::vector<std::string> profraws(merge.begin() + 4, merge.end());
  Expected<InstructionCounts> instructions = CountInstructionsClang(plan.program, profraws);
  if (instructions.ok()) {
    data.instructions = std::move(*instructions);
    data.instructions_note = InstructionsNote(data.instructions);
  } else {
    data.instructions_note = "no instruction counts: " + instructions.status().message();
  }
  return data;
}

}  // namespace

Expected<CoverageData> CollectCoverage(const CoveragePlan& plan) {
  CoverageData data;
  if (!plan.enabled) return data;
  if (plan.kind == CoverageKind::kClang) return CollectLlvm(plan);
  std::map<std::string, std::map<uint64_t, uint64_t>> lines;
  std::map<std::pair<std::string, std::string>, FunctionCounts> functions;
  std::error_code ec;
  // The .gcda files by directory: gcov reads each directory's in one run.
  std::map<std::string, std::vector<std::string>> by_directory;
  for (auto it = fs::recursive_directory_iterator(plan.directory, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file() || it->path().extension() != ".gcda") continue;
    // The .gcno is where the compiler left it: beside the object, at the original path.
    std::string original = it->path().string().substr(plan.directory.size());
    fs::path gcno = fs::path(original).replace_extension(".gcno");
    fs::path beside = fs::path(it->path()).replace_extension(".gcno");
    if (!fs::exists(gcno, ec)) continue;  // no notes: gcov could not read it either
    fs::copy_file(gcno, beside, fs::copy_options::overwrite_existing, ec);
    by_directory[it->path().parent_path().string()].push_back(it->path().filename().string());
  }
  for (const auto& [directory, gcdas] : by_directory) {
    std::vector<std::string> command = {"gcov", "--json-format", "--stdout"};
    command.insert(command.end(), gcdas.begin(), gcdas.end());
    std::string json;
    std::string where = directory.substr(plan.directory.size());
    if (base::Capture(command, directory, &json) != 0)
      return Status::Error("gcov failed on " + where);
    try {
      // One document per .gcda, one after the other.
      std::istringstream documents(json);
      while (documents >> std::ws && documents.peek() != EOF) {
        nlohmann::json doc;
        documents >> doc;
        std::string cwd = doc.value("current_working_directory", std::string());
        for (const auto& file : doc.at("files")) {
          std::string path = Absolute(file.at("file").get<std::string>(), cwd);
          auto& file_lines = lines[path];
          for (const auto& line : file.at("lines"))
            file_lines[line.at("line_number").get<uint64_t>()] += line.at("count").get<uint64_t>();
          for (const auto& fn : file.value("functions", nlohmann::json::array())) {
            std::string name = fn.value("demangled_name", fn.value("name", std::string()));
            FunctionCounts& f = functions[{path, name}];
            f.file = path;
            f.name = name;
            f.start_line = fn.value("start_line", uint64_t{0});
            f.end_line = fn.value("end_line", uint64_t{0});
            f.executions += fn.value("execution_count", uint64_t{0});
          }
        }
      }
    } catch (const nlohmann::json::exception& e) {
      return Status::Error("cannot read gcov's output for " + where + ": " + e.what());
    }
  }
  for (auto& [path, counts] : lines)
    data.files.push_back(FileCounts{path, {counts.begin(), counts.end()}});
  for (auto& [key, f] : functions) data.functions.push_back(std::move(f));
  // gcov's runtime wrote /ORIGINAL/PATH/x.gcda under the directory.
  Expected<InstructionCounts> instructions =
      CountInstructions(plan.program, [&](const std::string& gcda) {
        std::string moved = plan.directory + (gcda.empty() || gcda[0] != '/' ? "/" : "") + gcda;
        return fs::exists(moved, ec) ? moved : std::string();
      });
  if (instructions.ok()) {
    data.instructions = std::move(*instructions);
    data.instructions_note = InstructionsNote(data.instructions);
  } else {
    data.instructions_note = "no instruction counts: " + instructions.status().message();
  }
  return data;
}

Status AppendCoverage(const std::string& path, const std::string& module,
                      const CoverageData& data) {
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return Status::Error(path + ": " + std::strerror(errno));
  format::Writer writer;
  writer.beginAppend(fd);
  std::vector<uint64_t> pairs;
  for (const FileCounts& f : data.files) {
    pairs.clear();
    for (const auto& [line, count] : f.lines) {
      pairs.push_back(line);
      pairs.push_back(count);
    }
    writer.add(format::LineCountsRecord{f.path, module, f.lines.size(), pairs.data()});
  }
  for (const FunctionCounts& f : data.functions)
    writer.add(format::FunctionCountRecord{f.file, f.name, f.start_line, f.end_line, f.executions});
  // The instruction counts, a record per function and source file.
  const std::vector<LineInstructions>& lines = data.instructions.lines;
  std::vector<uint64_t> rows;
  for (size_t i = 0; i < lines.size();) {
    size_t j = i;
    rows.clear();
    for (; j < lines.size() && lines[j].file == lines[i].file &&
           lines[j].function == lines[i].function;
         ++j)
      rows.insert(rows.end(),
                  {lines[j].line, lines[j].executed, lines[j].uncounted, lines[j].unbounded});
    writer.add(format::LineInstructionsRecord{lines[i].file, module, lines[i].function, j - i,
                                              rows.data()});
    i = j;
  }
  for (const FunctionInstructions& f : data.instructions.functions)
    writer.add(format::FunctionInstructionsRecord{f.file, f.name, module, f.executed, f.uncounted,
                                                  f.unbounded});
  if (!data.instructions_note.empty()) writer.add(format::NoteRecord{0, data.instructions_note});
  bool ok = writer.flush();
  close(fd);
  if (!ok) return Status::Error(path + ": cannot append the coverage counts");
  return Status();
}

void RemoveCoverageDirectory(const CoveragePlan& plan) {
  if (!plan.enabled || plan.directory.empty()) return;
  std::error_code ec;
  fs::remove_all(plan.directory, ec);
}

}  // namespace hotline::coverage

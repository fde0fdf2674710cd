#include "cli/profile_path.h"

#include <dirent.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "export/export.h"

namespace hotline::cli {

Expected<std::string> NewestProfileHere() {
  std::string best;
  timespec best_time{};
  DIR* dir = opendir(".");
  if (!dir) return Status::Error("cannot read the current directory");
  while (dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    const std::string suffix = ".hotline";
    if (name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    struct stat st {};
    if (stat(name.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    bool newer = best.empty() || st.st_mtim.tv_sec > best_time.tv_sec ||
                 (st.st_mtim.tv_sec == best_time.tv_sec && st.st_mtim.tv_nsec > best_time.tv_nsec);
    if (newer) {
      best = name;
      best_time = st.st_mtim;
    }
  }
  closedir(dir);
  if (best.empty())
    return Status::Error("no profile named and no *.hotline file in the current directory");
  return best;
}

Expected<std::string> ProfileArgument(const std::string& file, bool folders) {
  if (file.empty()) return NewestProfileHere();
  std::error_code ec;
  if (!folders && std::filesystem::is_directory(file, ec)) {
    size_t runs = 0;
    for (const auto& entry : std::filesystem::directory_iterator(file, ec))
      runs += entry.is_regular_file() && entry.path().extension() == ".hotline";
    if (runs == 0) return Status::Error(file + " is a folder, not a profile");
    return Status::Error(fmt::format(
        "{} is a folder of {} profile{} (a sweep's runs): `hotline report -X {}` fits their "
        "complexity, `hotline html {}` shows them; name one of them for this",
        file, runs, runs == 1 ? "" : "s", file, file));
  }
  // A program named where its profile was meant: say which profile that would be.
  char magic[4] = {};
  FILE* f = fopen(file.c_str(), "rbe");
  bool elf = f && fread(magic, 1, 4, f) == 4 &&
             std::memcmp(magic,
                         "\x7f"
                         "ELF",
                         4) == 0;
  if (f) fclose(f);
  if (elf) {
    std::string base = file.substr(file.rfind('/') + 1);
    return Status::Error(file + " is a program, not a profile; did you mean " + base + ".hotline?");
  }
  return file;
}

Status ResolveProfileArguments(std::vector<std::string>& files, bool folders) {
  if (files.empty()) files.emplace_back();
  for (std::string& f : files) {
    Expected<std::string> file = ProfileArgument(f, folders);
    if (!file) return file.status();
    f = *file;
  }
  return {};
}

std::vector<std::string> ExpandDirectories(const std::vector<std::string>& files) {
  std::vector<std::string> out;
  for (const std::string& f : files) {
    std::error_code ec;
    if (f.empty() || !std::filesystem::is_directory(f, ec)) {
      out.push_back(f);
      continue;
    }
    std::vector<std::string> inside;
    for (const auto& entry : std::filesystem::directory_iterator(f, ec))
      if (entry.is_regular_file() && entry.path().extension() == ".hotline")
        inside.push_back(entry.path().string());
    std::sort(inside.begin(), inside.end());
    if (inside.empty()) inside.push_back(f);  // its reader says what is wrong with it
    out.insert(out.end(), inside.begin(), inside.end());
  }
  return out;
}

Status WriteConcatenation(const std::vector<std::string>& files, const std::string& output) {
  std::string bytes;
  for (const std::string& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream content;
    content << in.rdbuf();
    if (!in) return Status::Error(file + ": cannot read it");
    bytes += content.str();
  }
  return exporter::WriteFileAtomically(output, bytes);
}

}  // namespace hotline::cli

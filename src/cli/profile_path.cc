#include "cli/profile_path.h"

#include <dirent.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>

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

Expected<std::string> ProfileArgument(const std::string& file) {
  if (file.empty()) return NewestProfileHere();
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

}  // namespace hotline::cli

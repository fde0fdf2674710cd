#include "cli/profile_path.h"

#include <dirent.h>
#include <sys/stat.h>

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
  if (!file.empty()) return file;
  return NewestProfileHere();
}

}  // namespace hotline::cli

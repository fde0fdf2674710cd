// Replays every file given on the command line (or every file in the directories given)
// through the fuzz target, so the fuzz corpus runs as an ordinary ctest test without libFuzzer.
#include <dirent.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static int Replay(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return 1;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return 0;
}

int main(int argc, char** argv) {
  int failures = 0, replayed = 0;
  for (int i = 1; i < argc; ++i) {
    struct stat st {};
    if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
      DIR* dir = opendir(argv[i]);
      while (dirent* e = dir ? readdir(dir) : nullptr) {
        if (e->d_name[0] == '.') continue;
        failures += Replay(std::string(argv[i]) + "/" + e->d_name);
        ++replayed;
      }
      if (dir) closedir(dir);
    } else {
      failures += Replay(argv[i]);
      ++replayed;
    }
  }
  std::printf("%d replayed, %d failed\n", replayed, failures);
  return failures == 0 && replayed > 0 ? 0 : 1;
}

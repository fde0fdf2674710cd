#include "runtime/config.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/signals.h"
#include "runtime/descriptors.h"

namespace hotline::rt {
namespace {

uint64_t ParseU64(const char* s, size_t n, bool* ok) {
  uint64_t v = 0;
  *ok = n > 0;
  for (size_t i = 0; i < n; ++i) {
    if (s[i] < '0' || s[i] > '9') {
      *ok = false;
      return 0;
    }
    v = v * 10 + uint64_t(s[i] - '0');
  }
  return v;
}

bool Is(const char* s, size_t n, const char* word) {
  return std::strlen(word) == n && std::memcmp(s, word, n) == 0;
}

void ApplyOption(Config* c, const char* key, size_t key_len, const char* val, size_t val_len) {
  bool ok;
  uint64_t num = ParseU64(val, val_len, &ok);
  if (Is(key, key_len, "freq")) {
    if (ok && num <= 100000) c->freq_hz = uint32_t(num);
  } else if (Is(key, key_len, "clock")) {
    if (Is(val, val_len, "wall")) c->clock = format::ClockMode::kWall;
    if (Is(val, val_len, "cpu")) c->clock = format::ClockMode::kCpu;
  } else if (Is(key, key_len, "depth")) {
    if (ok && num >= 1 && num <= 4096) c->max_depth = uint32_t(num);
  } else if (Is(key, key_len, "unwind")) {
    if (Is(val, val_len, "fp")) c->unwinder = format::Unwinder::kFramePointers;
    if (Is(val, val_len, "dwarf")) c->unwinder = format::Unwinder::kDwarf;
  } else if (Is(key, key_len, "paused")) {
    if (ok) c->start_paused = num != 0;
  } else if (Is(key, key_len, "toggle")) {
    if (ok && num < 65) c->toggle_signal = ToggleSignalProblem(int(num)) ? 0 : int(num);
  } else if (Is(key, key_len, "heap")) {
    if (ok) c->heap = num != 0;
  } else if (Is(key, key_len, "heap_sample")) {
    if (ok && num <= (uint64_t(1) << 40)) c->heap_sample_bytes = num;
  } else if (Is(key, key_len, "heap_seed")) {
    if (ok) c->heap_seed = num;
  } else if (Is(key, key_len, "trace")) {
    if (Is(val, val_len, "counts")) c->trace = format::TraceMode::kCounts;
    if (Is(val, val_len, "timed")) c->trace = format::TraceMode::kTimed;
    if (Is(val, val_len, "none")) c->trace = format::TraceMode::kNone;
  } else if (Is(key, key_len, "sampler")) {
    c->kernel_sampler = Is(val, val_len, "kernel");
  } else if (Is(key, key_len, "follow_exec")) {
    if (ok) c->follow_exec = num != 0;
  }
}

}  // namespace

void ReadConfig(Config* c) {
  const char* output = getenv("HOTLINE_OUTPUT");
  if (!output || !*output || std::strlen(output) >= sizeof c->output) return;
  std::strcpy(c->output, output);
  c->active = true;
  if (const char* root = getenv("HOTLINE_ROOT_PID")) {
    bool ok;
    c->root_pid = ParseU64(root, std::strlen(root), &ok);
  }
  c->later_image = getenv("HOTLINE_LATER_IMAGE") != nullptr;
  if (const char* watch = getenv("HOTLINE_WATCH"); watch && std::strlen(watch) < sizeof c->watch)
    std::strcpy(c->watch, watch);
  const char* opts = getenv("HOTLINE_OPTIONS");
  while (opts && *opts) {
    const char* end = std::strchr(opts, ',');
    size_t len = end ? size_t(end - opts) : std::strlen(opts);
    const char* eq = static_cast<const char*>(std::memchr(opts, '=', len));
    if (eq) ApplyOption(c, opts, size_t(eq - opts), eq + 1, len - size_t(eq - opts) - 1);
    opts = end ? end + 1 : nullptr;
  }
}

namespace {

// Static storage: environ keeps pointing into these for the life of the process. Writable, as
// every environment string is: a program may write into its own (bash's
// initialize_shell_variables does, and died on a read-only literal here).
char g_preload_entry[4096 + 12];
char g_later_image_entry[] = "HOTLINE_LATER_IMAGE=1";

bool HasPrefix(const char* s, const char* prefix) {
  return std::strncmp(s, prefix, std::strlen(prefix)) == 0;
}

// "LD_PRELOAD=" followed by every entry of `value` but ours (those naming libhotline-rt.so);
// false when nothing is left.
bool PreloadWithoutUs(const char* value, char* out, size_t size) {
  size_t used = std::snprintf(out, size, "LD_PRELOAD=");
  size_t prefix = used;
  const char* p = value;
  while (*p) {
    while (*p == ' ' || *p == ':') ++p;
    const char* start = p;
    while (*p && *p != ' ' && *p != ':') ++p;
    size_t len = size_t(p - start);
    if (len == 0) continue;
    bool ours = false;
    for (size_t i = 0; i + 14 <= len; ++i)
      if (std::memcmp(start + i, "libhotline-rt.", 14) == 0) ours = true;
    if (ours || used + len + 2 > size) continue;
    if (used > prefix) out[used++] = ':';
    std::memcpy(out + used, start, len);
    used += len;
  }
  out[used] = '\0';
  return used > prefix;
}

// What follow_exec hands on to every image, saved from the environment at start-up (the
// program may change its own): the entries as they were, and the runtime's file.
constexpr int kFollowed = 4;  // LD_PRELOAD, HOTLINE_OUTPUT, HOTLINE_OPTIONS, HOTLINE_LATER_IMAGE
const char* const kFollowedNames[kFollowed] = {
    "LD_PRELOAD=", "HOTLINE_OUTPUT=", "HOTLINE_OPTIONS=", "HOTLINE_LATER_IMAGE="};
char g_followed[kFollowed - 1][8192];
bool g_following = false;
char g_runtime_file[4096];

// Whether a "LD_PRELOAD=" entry names the runtime.
bool PreloadsUs(const char* entry) { return std::strstr(entry, "libhotline-rt.") != nullptr; }

void SaveFollowed() {
  for (int i = 0; i < kFollowed - 1; ++i)
    for (size_t e = 0; environ && environ[e]; ++e)
      if (HasPrefix(environ[e], kFollowedNames[i]))
        std::snprintf(g_followed[i], sizeof g_followed[i], "%s", environ[e]);
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&SaveFollowed), &info) && info.dli_fname)
    std::snprintf(g_runtime_file, sizeof g_runtime_file, "%s", info.dli_fname);
  g_following = g_followed[0][0] && g_followed[1][0] && g_runtime_file[0];
}

}  // namespace

ExecEnvironment::ExecEnvironment(char* const* envp) : envp_(envp) {
  if (!g_following || !envp) return;
  bool present[kFollowed] = {};
  const char* their_preload = nullptr;
  size_t count = 0;
  for (; envp[count]; ++count) {
    for (int i = 0; i < kFollowed; ++i)
      if (HasPrefix(envp[count], kFollowedNames[i])) present[i] = true;
    if (HasPrefix(envp[count], "LD_PRELOAD=")) their_preload = envp[count];
  }
  bool preloaded = their_preload && PreloadsUs(their_preload);
  if (preloaded && present[1] && present[2] && present[3]) return;
  if (count + kFollowed + 1 > kMaxEntries) return;
  size_t n = 0;
  for (size_t i = 0; i < count; ++i)
    if (envp[i] != their_preload) entries_[n++] = envp[i];
  if (their_preload && !preloaded) {
    std::snprintf(preload_, sizeof preload_, "LD_PRELOAD=%s:%s", g_runtime_file,
                  their_preload + 11);
    entries_[n++] = preload_;
  } else {
    entries_[n++] = their_preload ? const_cast<char*>(their_preload) : g_followed[0];
  }
  for (int i = 1; i < kFollowed - 1; ++i)
    if (!present[i]) entries_[n++] = g_followed[i];
  if (!present[3]) entries_[n++] = g_later_image_entry;
  entries_[n] = nullptr;
  envp_ = entries_;
}

// The environment is edited in place, entry by entry, rather than through unsetenv/setenv: a
// host may define its own (bash does, to keep its variable table), and main() receives the
// very array the loader built, which setenv would replace behind its back.
void PrepareEnvironmentForChildren(const Config& c) {
  if (c.follow_exec) SaveFollowed();
  size_t kept = 0;
  bool later_image_noted = false;
  for (size_t i = 0; environ && environ[i]; ++i) {
    char* entry = environ[i];
    // The watched variables' addresses are the first image's: no other program has them.
    if (HasPrefix(entry, "HOTLINE_WATCH=")) continue;
    if (HasPrefix(entry, "HOTLINE_ROOT_PID=") || HasPrefix(entry, "HOTLINE_LATER_IMAGE=")) {
      // A later image must know it is one: it writes BASE.PID.hotline, not the output.
      if (c.follow_exec && !later_image_noted) {
        environ[kept++] = g_later_image_entry;
        later_image_noted = true;
      }
      continue;
    }
    if (!c.follow_exec &&
        (HasPrefix(entry, "HOTLINE_OUTPUT=") || HasPrefix(entry, "HOTLINE_OPTIONS="))) {
      continue;
    }
    if (!c.follow_exec && HasPrefix(entry, "LD_PRELOAD=")) {
      if (PreloadWithoutUs(entry + 11, g_preload_entry, sizeof g_preload_entry))
        environ[kept++] = g_preload_entry;
      continue;
    }
    environ[kept++] = entry;
  }
  if (environ) environ[kept] = nullptr;
}

namespace {

// BASE.PID.hotline (n = 0) or BASE.PID.N.hotline beside the configured output.
void ChildProfilePath(const Config& c, int n, char* path_out, uint64_t path_size) {
  char base[4096];
  std::snprintf(base, sizeof base, "%s", c.output);
  size_t len = std::strlen(base);
  if (len > 8 && std::strcmp(base + len - 8, ".hotline") == 0) base[len - 8] = '\0';
  long pid = long(getpid());
  if (n == 0) {
    std::snprintf(path_out, path_size, "%s.%ld.hotline", base, pid);
  } else {
    std::snprintf(path_out, path_size, "%s.%ld.%d.hotline", base, pid, n);
  }
}

constexpr int kNamesToTry = 1000;

}  // namespace

int OpenProfileFile(const Config& c, bool root_image, char* path_out, uint64_t path_size) {
  if (root_image) {
    // `hotline record` made the file (its header, and its own records from outside the program
    // as they come): the runtime appends, each chunk in one write.
    std::snprintf(path_out, path_size, "%s", c.output);
    return OpenOwned(c.output, O_WRONLY | O_CREAT | O_APPEND, 0644);
  }
  char dir[4096];
  std::snprintf(dir, sizeof dir, "%s", c.output);
  char* slash = std::strrchr(dir, '/');
  if (slash == dir) {
    dir[1] = '\0';
  } else if (slash) {
    *slash = '\0';
  } else {
    std::snprintf(dir, sizeof dir, ".");
  }
  int fd = OpenOwned(dir, O_TMPFILE | O_WRONLY, 0644);
  if (fd >= 0) {
    path_out[0] = '\0';
    return fd;
  }
  // A file system without unnamed files: the name first, O_EXCL.
  for (int n = 0; n < kNamesToTry; ++n) {
    ChildProfilePath(c, n, path_out, path_size);
    fd = OpenOwned(path_out, O_WRONLY | O_CREAT | O_EXCL | O_APPEND, 0644);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

bool NameProfileFile(const Config& c, int fd, char* path_out, uint64_t path_size) {
  char self[64];
  std::snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
  for (int n = 0; n < kNamesToTry; ++n) {
    ChildProfilePath(c, n, path_out, path_size);
    if (linkat(AT_FDCWD, self, AT_FDCWD, path_out, AT_SYMLINK_FOLLOW) == 0) return true;
    if (errno != EEXIST) break;
  }
  path_out[0] = '\0';
  return false;
}

}  // namespace hotline::rt

#include "runtime/modules.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <cstring>

#include "base/loaded_image.h"
#include "runtime/debug_frame.h"
#include "runtime/session.h"
#include "runtime/trace.h"

namespace hotline::rt {
namespace {

struct Module : base::LoadedImage {
  uint64_t id = 0;
  char path[512] = {};
  bool seen = false;  // in the current scan
};

// constinit: filled by the runtime's early constructor, before dynamic initialization would
// run; a table initialized then would be emptied under a count that says otherwise, and every
// module taken for new at the next scan.
constexpr int kMaxModules = 2048;
constinit Module g_modules[kMaxModules];
constinit int g_count = 0;
constinit uint64_t g_next_id = 1;

void DescribeModule(const dl_phdr_info* info, Module* m) {
  base::DescribeLoadedImage(info, m);
  const char* name = info->dlpi_name ? info->dlpi_name : "";
  if (name[0] == '\0') {
    std::strncpy(m->path, ExecutablePath(), sizeof m->path - 1);
    m->path[sizeof m->path - 1] = '\0';
  } else if (std::strncmp(name, "linux-vdso", 10) == 0 ||
             std::strncmp(name, "linux-gate", 10) == 0) {
    std::strcpy(m->path, "[vdso]");
  } else {
    std::strncpy(m->path, name, sizeof m->path - 1);
    m->path[sizeof m->path - 1] = '\0';
  }
}

int OnModule(dl_phdr_info* info, size_t, void* data) {
  Module candidate;
  DescribeModule(info, &candidate);
  if (candidate.size == 0) return 0;
  for (int i = 0; i < g_count; ++i) {
    Module& m = g_modules[i];
    if (m.start == candidate.start && m.bias == candidate.bias &&
        std::strcmp(m.path, candidate.path) == 0) {
      m.seen = true;
      return 0;
    }
  }
  if (g_count == kMaxModules) return 0;
  candidate.id = g_next_id++;
  candidate.seen = true;
  g_modules[g_count++] = candidate;
  auto* emit = static_cast<bool*>(data);
  *emit = true;
  return 0;
}

void EmitLoad(format::Writer& writer, const Module& m, uint64_t now) {
  writer.add(format::ModuleLoadOf(m, now, m.id, writer.internString(m.path)));
}

}  // namespace

namespace {

// The code that is the runtime's, never the program's: this library, and libunwind (its caches,
// its memory-validation pipe). Plain data, zero before any constructor runs: member
// initializers would make it dynamically initialized, after the runtime's early constructor
// has filled it in.
struct Image {
  uint64_t anchor, low, high;
};
Image g_runtime_images[2];

int FindRuntimeImages(dl_phdr_info* info, size_t, void*) {
  uint64_t low = UINT64_MAX, high = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    if (info->dlpi_addr + ph.p_vaddr < low) low = info->dlpi_addr + ph.p_vaddr;
    if (info->dlpi_addr + ph.p_vaddr + ph.p_memsz > high)
      high = info->dlpi_addr + ph.p_vaddr + ph.p_memsz;
  }
  for (Image& image : g_runtime_images) {
    if (image.anchor >= low && image.anchor < high) {
      image.low = low;
      image.high = high;
    }
  }
  return 0;
}

}  // namespace

void LocateRuntimeImages() {
  g_runtime_images[0].anchor = uint64_t(&FindRuntimeImages);
  g_runtime_images[1].anchor = uint64_t(&unw_backtrace);
  dl_iterate_phdr(FindRuntimeImages, nullptr);
}

bool IsRuntimeCode(const void* address) {
  auto a = uint64_t(address);
  for (const Image& image : g_runtime_images)
    if (a >= image.low && a < image.high) return true;
  return false;
}

const char* ExecutablePath() {
  static char path[4096];
  static bool known = false;
  if (!known) {
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    path[n > 0 ? n : 0] = '\0';
    known = true;
  }
  return path;
}

void RescanModules(format::Writer& writer, uint64_t now) {
  for (int i = 0; i < g_count; ++i) g_modules[i].seen = false;
  int before = g_count;
  bool added = false;
  dl_iterate_phdr(OnModule, &added);
  for (int i = before; i < g_count; ++i) {
    EmitLoad(writer, g_modules[i], now);
    const Module& m = g_modules[i];
    if (g_session.config.unwindsInProcess()) AddDebugFrameModule(m.path, m.bias, m.start, m.size);
  }
  // Drop modules that are gone, keeping the table compact.
  int kept = 0;
  for (int i = 0; i < g_count; ++i) {
    if (g_modules[i].seen) {
      g_modules[kept++] = g_modules[i];
    } else {
      // What was counted in it is named after it, not after what is mapped there next.
      FlushTraceSitesInLocked(writer, g_modules[i].start, g_modules[i].size, now - 1);
      writer.add(format::ModuleUnloadRecord{now, g_modules[i].id});
    }
  }
  g_count = kept;
}

void ReemitModules(format::Writer& writer, uint64_t now) {
  for (int i = 0; i < g_count; ++i) EmitLoad(writer, g_modules[i], now);
  RescanModules(writer, now);
}

}  // namespace hotline::rt

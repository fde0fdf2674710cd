// Definition sites: where a \def or token-list assignment made each token list, which labels
// the slots of its tokens and names the macro, and the sites file that carries a format's sites
// to the runs that load it.
#include "def_sites.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hooks_internal.h"
#include "hotline_tex.h"

namespace {

// The sites file: "HLTXSIT1", the number of file names and of sites (u32 each), the names (u32
// length, bytes), zeros to a multiple of 4 bytes, then the FormatSites by ref, in the machine's
// byte order: the engine that dumps a format is the one that loads it. Loading maps the file and
// uses its sites where they are: LaTeX's 45,000 cost no parsing and no copy.
constexpr char kSitesMagic[8] = {'H', 'L', 'T', 'X', 'S', 'I', 'T', '1'};

}  // namespace

using namespace hotline::tex;

extern "C" {

int hltex_known_list(int32_t ref) {
  if (!hltex_active) return 0;
  return g->defs.known(ref) ? 1 : 0;
}

int hltex_def_from_list = 0;

int hltex_def_begin_list(int32_t ref) {
  if (!hltex_active) return 1;
  const Def* site = g->defs.known(ref);
  if (!site || site->borrowed) return 0;
  g->pending_def.file = site->file;
  g->pending_def.line = site->line;
  g->pending_def.borrowed = 0;
  g->def_pending = true;
  hltex_def_from_list = 1;
  return 1;
}

void hltex_def_read_argument(void) {
  if (hltex_active && g->def_pending) g->pending_def.borrowed = 1;
}

void hltex_def_begin(int32_t index, int32_t name_kind, int64_t line, int via_argument) {
  if (!hltex_active) return;
  if (via_argument) {
    // The line the file was at when the macro call its current expansion began with was made:
    // the list entry just above the file's on the logical stack (tail calls keep it there).
    for (size_t i = g->stack.size(); i-- > 1;) {
      const Entry& e = g->stack[i - 1];
      if (e.kind != Kind::kFile) continue;
      if (e.index == index && g->stack[i].kind == Kind::kList && g->stack[i].caller_line > 0)
        line = int64_t(g->stack[i].caller_line);
      break;
    }
  }
  g->pending_def.file = LevelFile(index, name_kind);
  g->pending_def.line = uint64_t(line < 0 ? 0 : line);
  g->pending_def.borrowed = 0;
  g->def_pending = true;
  hltex_def_from_list = 0;
}

void hltex_def_end(int32_t ref) {
  hltex_def_from_list = 0;
  if (!hltex_active || !g->def_pending) return;
  g->def_pending = false;
  uint32_t id = g->defs.define(ref);
  if (!id) return;
  Def& d = g->defs[id];
  uint32_t gen = d.gen + 1;
  d = g->pending_def;
  d.gen = gen;
  ++DefEpoch(ref);
}

void hltex_format_dumped(const char* fmt_path) {
  if (!hltex_active) return;
  std::string path = std::string(fmt_path) + ".hotline-defs";
  std::vector<FormatSite> sites;
  std::vector<uint32_t> file_ids;                // file index → file id
  std::unordered_map<uint32_t, uint32_t> index;  // file id → file index
  for (const DefTable::Site& site : g->defs.knownSites()) {
    auto [it, added] = index.try_emplace(site.file, uint32_t(file_ids.size()));
    if (added) file_ids.push_back(site.file);
    sites.push_back(
        FormatSite{site.ref, it->second, uint32_t(std::min<uint64_t>(site.line, UINT32_MAX))});
  }
  std::string out(kSitesMagic, sizeof kSitesMagic);
  auto u32 = [&out](uint32_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); };
  u32(uint32_t(file_ids.size()));
  u32(uint32_t(sites.size()));
  for (uint32_t file : file_ids) {
    const std::string& name = FileName(file);
    u32(uint32_t(name.size()));
    out += name;
  }
  out.resize((out.size() + 3) & ~size_t(3), '\0');
  out.append(reinterpret_cast<const char*>(sites.data()), sites.size() * sizeof(FormatSite));
  FILE* f = std::fopen(path.c_str(), "wb");
  bool ok = f && std::fwrite(out.data(), 1, out.size(), f) == out.size();
  if (f && std::fclose(f) != 0) ok = false;
  if (!ok)
    std::fprintf(stderr, "hotline tex: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
}

void hltex_format_loaded(const char* fmt_path) {
  if (!hltex_active) return;
  std::string path = std::string(fmt_path) + ".hotline-defs";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;  // a format not made by this engine: its macros' sites are unknown
  struct stat st;
  void* map = MAP_FAILED;
  if (fstat(fd, &st) == 0 && st.st_size > 0)
    map = mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return;
  const char* data = static_cast<const char*>(map);
  size_t size = size_t(st.st_size), at = sizeof kSitesMagic;
  auto u32 = [&](uint32_t* v) {
    if (size - at < sizeof *v) return false;
    std::memcpy(v, data + at, sizeof *v);
    at += sizeof *v;
    return true;
  };
  uint32_t file_count = 0, site_count = 0;
  std::vector<uint32_t> files;
  bool ok = size >= at && std::memcmp(data, kSitesMagic, sizeof kSitesMagic) == 0 &&
            u32(&file_count) && u32(&site_count);
  for (uint32_t i = 0; ok && i < file_count; ++i) {
    uint32_t length = 0;
    ok = u32(&length) && size - at >= length;
    if (ok) files.push_back(FileId(std::string(data + at, length)));
    at += ok ? length : 0;
  }
  at = (at + 3) & ~size_t(3);
  ok = ok && at <= size && (size - at) / sizeof(FormatSite) == site_count &&
       (size - at) % sizeof(FormatSite) == 0;
  std::span<const FormatSite> sites;
  if (ok) sites = {reinterpret_cast<const FormatSite*>(data + at), site_count};
  ok = ok &&
       std::all_of(sites.begin(), sites.end(),
                   [&](const FormatSite& s) { return s.ref >= 0 && s.file < file_count; }) &&
       std::is_sorted(sites.begin(), sites.end(),
                      [](const FormatSite& a, const FormatSite& b) { return a.ref < b.ref; });
  if (!ok) {
    std::fprintf(stderr,
                 "hotline tex: %s is not a definition sites file of this engine; the format's "
                 "macros keep their names but not their sites (remake the format)\n",
                 path.c_str());
    munmap(map, size);
    return;
  }
  g->defs.setFormatSites(sites, std::move(files));  // mapped for the rest of the run
}

}  // extern "C"

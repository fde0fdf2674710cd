// Where each of TeX's token lists was defined (def_sites.cc): the sites seen in this run and
// those of the format, read from the sites file beside it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "tables.h"

namespace hotline::tex {

// 16 bytes: a \def looks its list up in a table of millions (tikz), a cache miss each.
struct Def {
  uint32_t file = 0;
  uint32_t gen : 31 = 0;  // bumped at every definition that makes this token list
  // Made at run time by a \def whose name was in another list, whose site it took, and whose
  // body read that list's arguments: a macro building a macro of its caller's text (LaTeX's
  // \newcommand builds the \def in \reserved@a). Names in its body may be the caller's text
  // rather than its own: they are looked for below it.
  uint32_t borrowed : 1 = 0;
  uint64_t line = 0;
};
static_assert(sizeof(Def) == 16);

// A definition site as the sites file beside a format holds it: the token list, an index into
// the file's list of file names, the line. 12 bytes.
struct FormatSite {
  int32_t ref;
  uint32_t file;
  uint32_t line;
};

// Definition sites by TeX token list (its reference count node, an index into TeX's memory):
// an id per token list looked up or defined (in the order first seen), the sites in a vector by
// id, the ids found by open addressing on the pointer. A format's sites (LaTeX's 45,000) are
// kept apart, where the sites file is mapped, bucketed by pointer, and enter the table when a
// list is first looked up: a run calls a few thousand of them, and an entry made for every one
// would cost more than the run's own lookups.
class DefTable {
 public:
  DefTable() {
    defs_.reserve(size_t(1) << 18);
    refs_.reserve(size_t(1) << 18);
    Allocate(size_t(1) << 15);
  }
  // The id of `ref`'s entry, made if needed (with the format's site, or gen 0: unknown); 0 for a
  // negative ref.
  uint32_t at(int32_t ref) {
    if (ref < 0) return 0;
    Slot* s = Find(ref);
    if (s->id) return s->id;
    const FormatSite* site = FormatSiteOf(ref);
    return Add(s, ref, site ? FormatDef(*site) : Def{});
  }
  // The id of `ref`'s entry, for a definition that makes it: the format's site of a list at that
  // pointer, if any, was freed and is not looked for.
  uint32_t define(int32_t ref) {
    if (ref < 0) return 0;
    Slot* s = Find(ref);
    return s->id ? s->id : Add(s, ref, Def{});
  }
  Def& operator[](uint32_t id) { return defs_[id - 1]; }
  // The entry of `ref` when it has a known site, else null.
  const Def* known(int32_t ref) {
    if (ref < 0) return nullptr;
    Slot* s = Find(ref);
    uint32_t id = s->id;
    if (!id) {
      const FormatSite* site = FormatSiteOf(ref);
      if (!site) return nullptr;  // unknown: not worth an entry
      id = Add(s, ref, FormatDef(*site));
    }
    const Def& d = defs_[id - 1];
    return d.gen ? &d : nullptr;
  }
  // A known site: the token list, its file (a file id), its line.
  struct Site {
    int32_t ref;
    uint32_t file;
    uint64_t line;
  };
  // Every known site, the format's included, by ref.
  std::vector<Site> knownSites() {
    std::vector<Site> sites;
    for (const FormatSite& site : format_)
      if (!Find(site.ref)->id) sites.push_back(Site{site.ref, format_files_[site.file], site.line});
    for (size_t i = 0; i < defs_.size(); ++i)
      if (defs_[i].gen) sites.push_back(Site{refs_[i], defs_[i].file, defs_[i].line});
    std::sort(sites.begin(), sites.end(),
              [](const Site& a, const Site& b) { return a.ref < b.ref; });
    return sites;
  }
  // The format's sites, sorted by ref, and the file ids of their file indices; called once,
  // before any lookup. `sites` stays where it is for the whole run.
  void setFormatSites(std::span<const FormatSite> sites, std::vector<uint32_t> files) {
    format_ = sites;
    format_files_ = std::move(files);
    // Bucket b holds format_[starts_[b], starts_[b+1]).
    size_t buckets = format_.empty() ? 0 : (size_t(format_.back().ref) >> kBucketShift) + 1;
    starts_.assign(buckets + 1, uint32_t(format_.size()));
    for (size_t i = format_.size(); i-- > 0;)
      starts_[size_t(format_[i].ref) >> kBucketShift] = uint32_t(i);
    for (size_t b = buckets; b-- > 0;) starts_[b] = std::min(starts_[b], starts_[b + 1]);
  }

 private:
  struct Slot {
    int32_t ref;
    uint32_t id;  // 1 + index into defs_, 0: empty
  };
  struct Free {
    void operator()(Slot* p) const { TableFree(p); }
  };
  // 256 words of TeX's memory a bucket: LaTeX's sites spread over about 1.5 million words, a
  // few to a bucket.
  static constexpr int kBucketShift = 8;
  static size_t Hash(int32_t ref) { return size_t((uint32_t(ref) * 0x9E3779B97F4A7C15ull) >> 20); }
  Slot* Find(int32_t ref) const {
    for (size_t i = Hash(ref) & mask_;; i = (i + 1) & mask_)
      if (!slots_[i].id || slots_[i].ref == ref) return &slots_[i];
  }
  const FormatSite* FormatSiteOf(int32_t ref) const {
    size_t b = size_t(ref) >> kBucketShift;
    if (b + 1 >= starts_.size()) return nullptr;
    for (uint32_t i = starts_[b]; i < starts_[b + 1]; ++i)
      if (format_[i].ref == ref) return &format_[i];
    return nullptr;
  }
  Def FormatDef(const FormatSite& site) const {
    Def d;
    d.file = format_files_[site.file];
    d.gen = 1;
    d.line = site.line;
    return d;
  }
  uint32_t Add(Slot* s, int32_t ref, const Def& def) {
    defs_.push_back(def);
    refs_.push_back(ref);
    *s = Slot{ref, uint32_t(defs_.size())};
    if (defs_.size() * 4 > (mask_ + 1) * 3) Grow();
    return uint32_t(defs_.size());
  }
  void Allocate(size_t size) {
    slots_.reset(static_cast<Slot*>(TableAlloc(size * sizeof(Slot))));
    mask_ = size - 1;
  }
  void Grow() {
    Allocate((mask_ + 1) * 2);
    for (size_t i = 0; i < refs_.size(); ++i) *Find(refs_[i]) = Slot{refs_[i], uint32_t(i + 1)};
  }
  std::unique_ptr<Slot[], Free> slots_;
  size_t mask_ = 0;
  std::vector<Def> defs_;
  std::vector<int32_t> refs_;
  std::span<const FormatSite> format_;
  std::vector<uint32_t> format_files_;  // file index in the sites file → file id
  std::vector<uint32_t> starts_;
};

}  // namespace hotline::tex

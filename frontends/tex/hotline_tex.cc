// The hook library of hotline's profiling pdfTeX (docs/tex.md), with texprof's semantics.
//
// TeX's main_control runs one command per "slot": get_x_token (expanding macros as it goes)
// then the command. One rdtsc per slot, at big_switch, charges the time since the previous
// read to the slot labelled last: its command, the file and line its token came from (a macro
// body's tokens: the macro's definition line) and the stack of macros, \everypar-style hooks and
// \input files that produced it. TeX pops a macro before its last token's callee runs (the tail
// call of macro_call); the stack here keeps such a macro until the callee ends, as texprof's
// logical depth does, and a macro tail-calling a macro already in its tail chain (\loop's
// \iterate/\next) returns to that entry, so the stack stays as deep as the distinct macros.
//
// Written with hotline's streaming writer: frames (a macro at its definition, a file at a line,
// a phase of TeX in the pseudo file `system`) in FRAMES runs, stack nodes in STACK_NODES runs,
// one sample per node and flush carrying its nanoseconds (or tokens, --cost tokens) in SAMPLES
// runs, LINE_COUNTS of slots per line, CALL_COUNTS of macro calls per edge, and TEX_COMMANDS
// (slots and cost per command code).
#include "hotline_tex.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "format/schema.h"
#include "format/writer.h"

int hltex_active = 0;
uint64_t hltex_tokens = 0;

namespace {

namespace fmt = hotline::format;

uint64_t ClockNs(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// pdfTeX's command codes (pdftex.web §207–§210) as texprofile names them in its command table.
// Codes that share a number are named by the one main_control can see after get_x_token.
const char* const kCommandNames[] = {
    "relax",
    "left_brace",
    "right_brace",
    "math_shift",
    "tab_mark",
    "car_ret",
    "mac_param",
    "sup_mark",
    "sub_mark",
    "endv",
    "spacer",
    "letter",
    "other_char",
    "par_end",
    "stop",
    "delim_num",
    "char_num",
    "math_char_num",
    "mark",
    "xray",
    "make_box",
    "hmove",
    "vmove",
    "un_hbox",
    "un_vbox",
    "remove_item",
    "hskip",
    "vskip",
    "mskip",
    "kern",
    "mkern",
    "leader_ship",
    "halign",
    "valign",
    "no_align",
    "vrule",
    "hrule",
    "insert",
    "vadjust",
    "ignore_spaces",
    "after_assignment",
    "after_group",
    "break_penalty",
    "start_par",
    "ital_corr",
    "accent",
    "math_accent",
    "discretionary",
    "eq_no",
    "left_right",
    "math_comp",
    "limit_switch",
    "above",
    "math_style",
    "math_choice",
    "non_script",
    "vcenter",
    "case_shift",
    "message",
    "extension",
    "in_stream",
    "begin_group",
    "end_group",
    "omit",
    "ex_space",
    "no_boundary",
    "radical",
    "end_cs_name",
    "char_given",
    "math_given",
    "last_item",
    "toks_register",
    "assign_toks",
    "assign_int",
    "assign_dimen",
    "assign_glue",
    "assign_mu_glue",
    "assign_font_dimen",
    "assign_font_int",
    "set_aux",
    "set_prev_graf",
    "set_page_dimen",
    "set_page_int",
    "set_box_dimen",
    "set_shape",
    "def_code",
    "def_family",
    "set_font",
    "def_font",
    "register",
    "advance",
    "multiply",
    "divide",
    "prefix",
    "let",
    "shorthand_def",
    "read_to_cs",
    "def",
    "set_box",
    "hyph_data",
    "set_interaction",
    "letterspace_font",
    "pdf_copy_font",
};
constexpr int kCommandCount = int(sizeof kCommandNames / sizeof kCommandNames[0]);
// Slots that are not commands of main_control: TeX's own phases.
constexpr int kCommandPhase = kCommandCount;

const char* const kPhaseNames[] = {"",           "ship_out",  "line_break",
                                   "build_page", "init_trie", "close_files_and_terminate"};

// The lookup tables' blocks, zeroed. The first ones share one 2 MiB block, aligned and marked
// MADV_HUGEPAGE, which the kernel backs with a single huge page where it can: a probe lands
// anywhere in its table, and in 4 KiB pages most probes of a long run missed the TLB as well as
// the cache. Blocks of tables that grow past it come from calloc.
constexpr size_t kTableArenaBytes = size_t(2) << 20;
char* table_arena = nullptr;
size_t table_arena_used = 0;

void* TableAlloc(size_t bytes) {
  if (!table_arena && table_arena_used == 0) {
    table_arena_used = kTableArenaBytes;  // tried once: full unless the mapping succeeds
    void* m = mmap(nullptr, 2 * kTableArenaBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED) {
      uintptr_t start = reinterpret_cast<uintptr_t>(m);
      uintptr_t aligned = (start + kTableArenaBytes - 1) & ~(kTableArenaBytes - 1);
      if (aligned > start) munmap(m, aligned - start);
      munmap(reinterpret_cast<void*>(aligned + kTableArenaBytes),
             start + 2 * kTableArenaBytes - aligned - kTableArenaBytes);
      table_arena = reinterpret_cast<char*>(aligned);
      madvise(table_arena, kTableArenaBytes, MADV_HUGEPAGE);
      table_arena_used = 0;
    }
  }
  bytes = (bytes + 63) & ~size_t(63);
  if (table_arena_used + bytes <= kTableArenaBytes) {
    void* p = table_arena + table_arena_used;
    table_arena_used += bytes;
    return p;
  }
  void* p = std::calloc(1, bytes);
  if (!p) std::abort();  // as operator new would, without exceptions
  return p;
}

void TableFree(void* p) {
  if (p < table_arena || p >= table_arena + kTableArenaBytes) std::free(p);
}

// Open addressing from a pair of integers to an id (0 = none): the stack nodes, frames and call
// edges the hooks ask for, without an allocation per entry. TeX's line numbers and every id here
// are 32-bit. A table made large enough not to grow in most runs.
class PairIndex {
 public:
  explicit PairIndex(int log2_size) { Allocate(size_t(1) << log2_size); }
  // The id of (a, b), or `fresh` after storing it (*added set).
  uint32_t findOrAdd(uint64_t a, uint32_t b, uint32_t fresh, bool* added) {
    for (size_t i = Hash(a, b) & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.value && s.a == a && s.b == b) {
        *added = false;
        return s.value;
      }
      if (!s.value) {
        s = Slot{a, b, fresh};
        *added = true;
        if (++used_ * 4 > (mask_ + 1) * 3) Grow();
        return fresh;
      }
    }
  }

 private:
  struct Slot {  // 16 bytes
    uint64_t a = 0;
    uint32_t b = 0;
    uint32_t value = 0;
  };
  struct Free {
    void operator()(Slot* p) const { TableFree(p); }
  };
  static size_t Hash(uint64_t a, uint64_t b) {
    uint64_t h = (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full);
    return size_t(h ^ (h >> 29));
  }
  void Allocate(size_t size) {
    slots_.reset(static_cast<Slot*>(TableAlloc(size * sizeof(Slot))));
    mask_ = size - 1;
  }
  void Grow() {
    std::unique_ptr<Slot[], Free> old = std::move(slots_);
    size_t old_size = mask_ + 1;
    Allocate(old_size * 2);
    for (size_t j = 0; j < old_size; ++j) {
      const Slot& s = old[j];
      if (!s.value) continue;
      size_t i = Hash(s.a, s.b) & mask_;
      while (slots_[i].value) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }
  std::unique_ptr<Slot[], Free> slots_;
  size_t mask_ = 0;
  size_t used_ = 0;
};

// A macro as TeX users know it (control sequence + definition site), a hook (\everypar), an
// \input file, a phase of TeX, or the top level: a function of the profile.
struct Func {
  uint32_t name = 0;  // into Profiler::names
  uint32_t def_file = 0;
  uint64_t def_line = 0;
  uint32_t def_frame = 0;  // the frame at the definition, for TRACE_FUNCTION
  bool trace_written = false;
  // The last call's caller and what it resolved to: a loop calls from the same place.
  uint32_t last_base = 0, last_node = 0;
  uint32_t last_caller = UINT32_MAX;
  uint32_t last_edge = 0;
};

struct Frame {
  uint32_t func = 0;
  uint32_t file = 0;
  uint64_t line = 0;
  bool written = false;
};

// What the lookups read of a stack node: 16 bytes, four to a cache line. Its cost is in an array
// of its own (Profiler::node_totals), which the lookups never touch.
struct Node {
  uint32_t parent = 0;  // 1-based, 0 = outermost
  uint32_t frame = 0;   // 1-based
  // Its first kListedChildren children, newest first, in a list through next_sibling; the others
  // in node_by_key. Children are mostly made together, near each other in the array: walking
  // them stays in the cache, where a probe of the index is a miss.
  uint32_t first_child = 0, next_sibling = 0;
};
constexpr int kListedChildren = 8;

struct Def {
  uint32_t file = 0;
  uint32_t gen = 0;  // bumped at every definition that makes this token list
  uint64_t line = 0;
};

// An array indexed by one of TeX's pointers (an eqtb index, a memory word), in pages made when
// first touched: TeX's pointers spread over a range of millions (the hash's extra entries start
// far above eqtb; token lists fill memory from its top), and a vector as long as the range would
// zero tens of megabytes at every run. Its entries are trivially copyable, all-zero when empty.
template <typename T>
class PagedArray {
 public:
  static_assert((sizeof(T) & (sizeof(T) - 1)) == 0, "entries a power of two in size");
  static constexpr size_t kPerPage = (size_t(256) << 10) / sizeof(T);  // 256 KiB pages
  PagedArray() = default;
  PagedArray(const PagedArray&) = delete;
  PagedArray& operator=(const PagedArray&) = delete;
  ~PagedArray() {
    for (T* page : pages_) std::free(page);
  }
  // The entry at `i`, its page made (zeroed) if needed.
  T& at(size_t i) {
    size_t page = i / kPerPage;
    if (__builtin_expect(page >= pages_.size() || !pages_[page], 0)) MakePage(page);
    return pages_[page][i % kPerPage];
  }

 private:
  // calloc: a block this large is pages the kernel zeroes when first touched, so that the parts
  // of a page no pointer falls in cost nothing. The entries are all-zero when value-initialized.
  void MakePage(size_t page) {
    if (page >= pages_.size()) pages_.resize(page + 1, nullptr);
    if (!pages_[page]) {
      pages_[page] = static_cast<T*>(std::calloc(kPerPage, sizeof(T)));
      if (!pages_[page]) std::abort();  // as operator new would, without exceptions
    }
  }
  std::vector<T*> pages_;
};

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
    return Def{format_files_[site.file], 1, site.line};
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

enum class Kind : uint8_t { kList, kFile, kPhase };

// The last location a slot was labelled at under one stack entry, and what it resolved to: the
// entry's callers never change while it is on the stack, so this holds until it is popped.
struct LabelCache {
  uint32_t file = 0;
  uint32_t node = 0;  // 0: empty
  uint64_t line = 0;
};

// One entry of the logical stack. Its stack nodes are looked up lazily (BaseAt, NodeAt): a call
// only notes the line its caller (a file) was at, and the nodes are found when a slot is charged
// to the entry or to one above it. Most macros expand into others without running a command of
// their own: the format build makes 13.6 million calls for 440,000 slots.
struct Entry {
  Kind kind = Kind::kList;
  bool tail = false;  // its TeX input level is gone (tail call): it ends with the entry above
  uint32_t func = 0;
  uint32_t base = 0;       // node of the callers; 0 until looked up
  uint32_t node = 0;       // lists: node at the definition; files: at node_line; 0 until looked up
  uint64_t node_line = 0;  // files: the line `node` stands for
  uint64_t line = 1;       // files: the line last seen calling
  uint64_t caller_line = 0;  // the line of the entry below (a file) when this one began
  int32_t index = 0;         // files: TeX's input level (in_open)
  int32_t ref = 0;           // lists: TeX's token list (its reference count node)
  LabelCache label;
};

// The logical stack. Popped entries stay allocated, so that a push writes only the fields a new
// entry needs: the format build pushes 13.6 million.
class EntryStack {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Entry& back() { return entries_[size_ - 1]; }
  Entry& operator[](size_t i) { return entries_[i]; }
  // Drops the entries from `n` up (never grows).
  void resize(size_t n) {
    if (n < size_) size_ = n;
  }
  // A new entry on top, its nodes, caches and counts not looked up yet.
  Entry& push() {
    if (size_ == entries_.size()) entries_.resize(entries_.size() * 2 + 64);
    Entry& e = entries_[size_++];
    e.tail = false;
    e.base = e.node = 0;
    e.line = 1;
    e.ref = 0;
    e.label.node = 0;
    return e;
  }

 private:
  std::vector<Entry> entries_;
  size_t size_ = 0;
};

struct Profiler {
  std::string output;
  int fd = -1;
  fmt::Writer writer;
  bool on = true;
  bool tokens_cost = false;
  bool finished = false;

  uint64_t start_ticks = 0, start_ns = 0;
  uint64_t last = 0;  // clock (or token count) at the last charge
  uint64_t flush_deadline = 0, flush_interval = 0;
  bool fresh = false;  // a clock read since the last label: the next label needs none

  std::vector<std::string> files;  // file id - 1
  std::unordered_map<std::string, uint32_t> file_by_name;
  std::vector<uint32_t> file_at_index;  // TeX's in_open level → file id
  uint32_t terminal_file = 0, pseudo_file = 0, system_file = 0, unknown_file = 0;

  std::vector<std::string> names;  // name id - 1
  std::unordered_map<std::string, uint32_t> name_by_text;
  std::vector<Func> funcs;    // func id - 1
  PairIndex func_by_key{14};  // (name << 32 | def_file, def_line)
  std::vector<Frame> frames;
  PairIndex frame_by_key{15};  // (func << 32 | file, line)
  std::vector<Node> nodes;
  // By node id - 1: its ticks (or tokens) and slots since the last flush, in one line. The slots
  // per line are these added up by the nodes' frames when the profile is written.
  struct NodeTotals {
    uint64_t cost = 0, slots = 0;
  };
  std::vector<NodeTotals> node_totals;
  // The nodes are written in the order made, all of them (each is charged or is the caller of
  // one that is): node i is the writer's node node_id_base + i.
  uint32_t nodes_written = 0;
  uint64_t node_id_base = 0;
  // The nodes waiting to be written in one STACK_NODES record, the samples in one SAMPLES (a
  // few bytes each, where records of their own took 17 and 11), and the frames in one FRAMES
  // (each text once: a macro's file is in most of its frames), at most kSize (kFrames) of each.
  struct Batches {
    static constexpr size_t kSize = 4096;
    static constexpr size_t kFrames = 1024;  // 64 KiB of entries: malloc's heap, not a mapping
    uint64_t first_id = 0;
    std::vector<uint64_t> parents, frames;
    std::vector<uint64_t> samples;  // (node, weight)
    std::vector<fmt::FramesEntry> frame_entries;
    std::vector<std::string_view> texts;  // the FRAMES record's texts
    // By name id and by file id: (texts_batch << 32 | index in texts) when in this batch's texts.
    std::vector<uint64_t> name_text, file_text;
    uint64_t texts_batch = 1;
  } batches;
  PairIndex node_by_key{14};  // (parent, frame) of the roots and the nodes not listed
  DefTable defs;              // token list (its reference count node) → site
  // A control sequence: the macro it was last called as (its body `ref`, the Def `def` and the
  // generation seen there), and its calls from the caller it had last (`pending` calls not yet
  // added to the edge `edge`'s count): a loop calls from the same place, and the count stays in
  // the one line a call reads anyway. The binding holds while the epoch of ref's bucket is
  // `epoch` (no definition made a token list of that bucket since), without reading the Def.
  // 32 bytes.
  struct MacroSlot {
    int32_t ref = 0;
    uint32_t gen = 0;
    uint32_t func = 0;
    uint32_t def = 0;  // DefTable id
    uint32_t epoch = 0;
    uint32_t caller = 0;
    uint32_t edge = 0;  // call edge id, 0: none yet
    uint32_t pending = 0;
  };
  PagedArray<MacroSlot> macros;       // by control sequence (an eqtb index)
  std::vector<int32_t> macros_bound;  // the control sequences with a slot in use
  PagedArray<uint32_t> cs_names;      // by control sequence: its name id, once asked for
  // Bumped at every definition that makes a token list of the bucket (DefBucket): a MacroSlot
  // bound in the same epoch of its ref's bucket is still right. 4 KiB, in the cache.
  static constexpr int kDefBucketBits = 10;
  uint32_t def_epochs[1 << kDefBucketBits] = {};
  Def pending_def;
  bool def_pending = false;

  EntryStack stack;
  uint32_t root_func = 0, root_node = 0;

  // The slot being charged.
  uint32_t current = 0;  // node
  int current_cmd = 0;
  uint32_t phase_depth = 0;
  std::vector<std::pair<uint32_t, int>> phase_saved;  // label before each phase

  LabelCache root_label;  // the label cache of the empty stack

  // Running totals.
  // Slots per line, by file id - 1, indexed by line, added up from the nodes' when written.
  std::vector<std::vector<uint64_t>> line_counts;
  std::vector<bool> lines_changed;
  // Calls per edge (caller func, or 0 for the top level; callee func): the edge's id in
  // call_index; caller, callee and count at 3 × (id - 1) in call_triples, as CALL_COUNTS has them.
  PairIndex call_index{15};
  std::vector<uint64_t> call_triples;
  bool calls_changed = false;
  uint64_t max_depth = 0;
  uint64_t command_slots[kCommandCount + 1] = {};
  uint64_t command_cost[kCommandCount + 1] = {};  // ticks, converted when written
  uint64_t command_written = 0;
};

Profiler* g = nullptr;

uint64_t Now() { return g->tokens_cost ? hltex_tokens : __rdtsc(); }

uint32_t FileId(const std::string& name) {
  auto [it, added] = g->file_by_name.try_emplace(name, uint32_t(g->files.size() + 1));
  if (added) {
    g->files.push_back(name);
    g->line_counts.emplace_back();
    g->lines_changed.push_back(false);
  }
  return it->second;
}

uint64_t& LineCount(uint32_t file, uint64_t line) {
  std::vector<uint64_t>& counts = g->line_counts[file - 1];
  if (line >= counts.size()) counts.resize(line + 1);
  return counts[line];
}

uint32_t NameId(const std::string& text) {
  auto [it, added] = g->name_by_text.try_emplace(text, uint32_t(g->names.size() + 1));
  if (added) g->names.push_back(text);
  return it->second;
}

uint32_t FuncId(uint32_t name, uint32_t def_file, uint64_t def_line) {
  bool added = false;
  uint32_t id = g->func_by_key.findOrAdd((uint64_t(name) << 32) | def_file, uint32_t(def_line),
                                         uint32_t(g->funcs.size() + 1), &added);
  if (added) {
    Func f;
    f.name = name;
    f.def_file = def_file;
    f.def_line = def_line;
    g->funcs.push_back(f);
  }
  return id;
}

uint32_t FuncId(const std::string& name, uint32_t def_file, uint64_t def_line) {
  return FuncId(NameId(name), def_file, def_line);
}

uint32_t FrameId(uint32_t func, uint32_t file, uint64_t line) {
  bool added = false;
  uint32_t id = g->frame_by_key.findOrAdd((uint64_t(func) << 32) | file, uint32_t(line),
                                          uint32_t(g->frames.size() + 1), &added);
  if (added) g->frames.push_back(Frame{func, file, line, false});
  return id;
}

uint32_t NodeId(uint32_t parent, uint32_t frame) {
  if (parent) {
    int listed = 0;
    for (uint32_t c = g->nodes[parent - 1].first_child; c; c = g->nodes[c - 1].next_sibling) {
      if (g->nodes[c - 1].frame == frame) return c;
      ++listed;
    }
    if (listed < kListedChildren) {
      uint32_t id = uint32_t(g->nodes.size() + 1);
      g->nodes.push_back(Node{parent, frame, 0, g->nodes[parent - 1].first_child});
      g->nodes[parent - 1].first_child = id;
      g->node_totals.emplace_back();
      return id;
    }
  }
  bool added = false;
  uint32_t id = g->node_by_key.findOrAdd(parent, frame, uint32_t(g->nodes.size() + 1), &added);
  if (added) {
    g->nodes.push_back(Node{parent, frame});
    g->node_totals.emplace_back();
  }
  return id;
}

// The id of the call edge (caller func, or 0 for the top level; callee func).
uint32_t EdgeId(uint32_t caller, uint32_t callee) {
  bool added = false;
  uint32_t id =
      g->call_index.findOrAdd(caller, callee, uint32_t(g->call_triples.size() / 3 + 1), &added);
  if (added) {
    g->call_triples.push_back(caller);
    g->call_triples.push_back(callee);
    g->call_triples.push_back(0);
  }
  return id;
}

// The count of call edge `id`.
uint64_t& CallCount(uint32_t id) { return g->call_triples[3 * (id - 1) + 2]; }

// Adds a control sequence's pending calls to its edge.
void FlushCalls(Profiler::MacroSlot& slot) {
  if (!slot.pending) return;
  CallCount(slot.edge) += slot.pending;
  slot.pending = 0;
}

uint32_t DefFrame(uint32_t func) {
  Func& f = g->funcs[func - 1];
  if (!f.def_frame) f.def_frame = FrameId(func, f.def_file, f.def_line);
  return f.def_frame;
}

// The line the top of the stack calls from, `line` being the line the innermost file is at
// (TeX's `line`, for level `index`): a file's line is noted when it is its own level's.
uint64_t CallerLine(int32_t index, int64_t line) {
  if (g->stack.empty()) return 0;
  Entry& top = g->stack.back();
  if (top.kind == Kind::kFile && top.index == index && line > 0) top.line = uint64_t(line);
  return top.line;
}

uint32_t BaseAt(size_t i);

// The node of stack entry `i` as a caller: a list's at its definition, a file's at `line`.
uint32_t NodeAt(size_t i, uint64_t line) {
  Entry& e = g->stack[i];
  if (e.kind == Kind::kFile) {
    if (!e.node || e.node_line != line) {
      e.node = NodeId(BaseAt(i), FrameId(e.func, g->funcs[e.func - 1].def_file, line));
      e.node_line = line;
    }
    return e.node;
  }
  if (!e.node) {
    uint32_t base = BaseAt(i);
    Func& f = g->funcs[e.func - 1];
    if (f.last_base != base || !f.last_node) {
      f.last_base = base;
      f.last_node = NodeId(base, DefFrame(e.func));
    }
    e.node = f.last_node;
  }
  return e.node;
}

// The node of the callers of stack entry `i`.
uint32_t BaseAt(size_t i) {
  Entry& e = g->stack[i];
  if (!e.base) e.base = i == 0 ? g->root_node : NodeAt(i - 1, e.caller_line);
  return e.base;
}

uint32_t TopFunc() { return g->stack.empty() ? g->root_func : g->stack.back().func; }

void Charge(uint64_t now) {
  uint64_t spent = now - g->last;
  g->last = now;
  if (!g->on || !g->current) return;
  g->node_totals[g->current - 1].cost += spent;
  g->command_cost[g->current_cmd] += spent;
}

void FlushIfDue();

// ---- Writing ---------------------------------------------------------------------------------

// Costs to what the profile counts: ticks to nanoseconds at the rate seen since the start (one
// division per write, then a multiplication per cost), tokens as they are.
class CostUnit {
 public:
  CostUnit(uint64_t now_ticks, uint64_t now_ns) {
    uint64_t span_ticks = now_ticks - g->start_ticks, span_ns = now_ns - g->start_ns;
    if (!g->tokens_cost && span_ticks)
      ns_per_tick_q32_ = uint64_t(((unsigned __int128)span_ns << 32) / span_ticks);
  }
  uint64_t operator()(uint64_t cost) const {
    if (g->tokens_cost) return cost;
    return uint64_t(((unsigned __int128)cost * ns_per_tick_q32_) >> 32);
  }

 private:
  uint64_t ns_per_tick_q32_ = 0;
};

const std::string& FileName(uint32_t id) {
  static const std::string none;
  return id ? g->files[id - 1] : none;
}

// The index of `text` in the batch's texts (`slots` by its name or file id `i`), added if new.
uint64_t BatchText(std::vector<uint64_t>& slots, size_t i, std::string_view text) {
  Profiler::Batches& b = g->batches;
  if (i >= slots.size()) slots.resize(i + 1);
  if (slots[i] >> 32 == b.texts_batch) return slots[i] & UINT32_MAX;
  b.texts.push_back(text);
  slots[i] = b.texts_batch << 32 | (b.texts.size() - 1);
  return b.texts.size() - 1;
}

// Writes the frames batched so far.
void WriteFrames() {
  Profiler::Batches& b = g->batches;
  if (b.frame_entries.empty()) return;
  g->writer.add(fmt::FramesRecord{b.texts.size(), b.texts.data(), b.frame_entries.size(),
                                  b.frame_entries.data()});
  b.frame_entries.clear();
  b.texts.clear();
  ++b.texts_batch;
}

void WriteFrame(uint32_t id) {
  Frame& f = g->frames[id - 1];
  if (f.written) return;
  f.written = true;
  Profiler::Batches& b = g->batches;
  if (b.frame_entries.size() >= Profiler::Batches::kFrames) WriteFrames();
  if (b.texts.empty()) b.texts.push_back("tex");  // the module: text 0
  const Func& func = g->funcs[f.func - 1];
  fmt::FramesEntry& e = b.frame_entries.emplace_back();
  e.id = id;
  e.name = BatchText(b.name_text, func.name, g->names[func.name - 1]);
  e.file = BatchText(b.file_text, f.file, FileName(f.file));
  e.line = f.line;
  e.def_file = BatchText(b.file_text, func.def_file, FileName(func.def_file));
  e.def_line = func.def_line;
  e.module = 0;
}

// Writes the nodes batched so far, after the frames they name.
void WriteNodes() {
  Profiler::Batches& b = g->batches;
  WriteFrames();
  if (b.parents.empty()) return;
  g->writer.add(fmt::StackNodesRecord{b.first_id, fmt::kNamedFrameTag, b.parents.size(),
                                      b.parents.data(), b.frames.data()});
  b.parents.clear();
  b.frames.clear();
}

// Writes the samples batched so far, after the nodes they name.
void WriteSamples(uint64_t now_ns, uint64_t tid) {
  Profiler::Batches& b = g->batches;
  WriteNodes();
  if (b.samples.empty()) return;
  g->writer.add(fmt::SamplesRecord{now_ns, tid, 0, b.samples.size() / 2, b.samples.data()});
  b.samples.clear();
}

// Puts a node made since the last write (and its frame) in the batch. Nodes are written in the
// order made, node i as the writer's node_id_base + i: a parent is older than its children.
void WriteNewNode(const Node& n) {
  Profiler::Batches& b = g->batches;
  WriteFrame(n.frame);
  if (b.parents.size() >= Profiler::Batches::kSize) WriteNodes();
  if (b.parents.empty()) b.first_id = g->writer.nextStackNodeId();
  b.parents.push_back(n.parent ? g->node_id_base + n.parent : 0);
  b.frames.push_back(n.frame);
}

void WriteTraceFunction(uint32_t func) {
  Func& f = g->funcs[func - 1];
  if (f.trace_written) return;
  f.trace_written = true;
  uint32_t frame = DefFrame(func);
  WriteFrame(frame);
  g->writer.add(fmt::TraceFunctionRecord{func, fmt::kNamedFrameTag | frame});
}

uint64_t Tid() { return uint64_t(syscall(SYS_gettid)); }

// Writes the pending records once they fill a chunk of 256 KiB: the writer's buffer stays that
// size instead of growing (copied, and its pages faulted in) to hold a whole flush's records.
void FlushIfLarge() {
  if (g->writer.pendingBytes() >= (size_t(256) << 10)) g->writer.flush();
}

void WriteAccumulated(uint64_t now_ticks, uint64_t now_ns) {
  uint64_t tid = Tid();
  CostUnit to_ns(now_ticks, now_ns);
  if (g->nodes_written == 0) g->node_id_base = g->writer.nextStackNodeId() - 1;
  for (uint32_t i = 1; i <= g->nodes.size(); ++i) {
    const Node& n = g->nodes[i - 1];
    if (i > g->nodes_written) WriteNewNode(n);
    Profiler::NodeTotals& totals = g->node_totals[i - 1];
    if (totals.slots) {
      const Frame& frame = g->frames[n.frame - 1];
      LineCount(frame.file, frame.line) += totals.slots;
      g->lines_changed[frame.file - 1] = true;
      totals.slots = 0;
    }
    uint64_t& cost = totals.cost;
    if (!cost) continue;
    uint64_t ns = to_ns(cost);
    cost = 0;
    if (!ns) continue;
    g->batches.samples.push_back(g->node_id_base + i);
    g->batches.samples.push_back(ns);
    if (g->batches.samples.size() >= 2 * Profiler::Batches::kSize) {
      WriteSamples(now_ns, tid);
      FlushIfLarge();
    }
  }
  g->nodes_written = uint32_t(g->nodes.size());
  WriteSamples(now_ns, tid);
  std::vector<uint64_t> pairs;
  for (size_t f = 0; f < g->files.size(); ++f) {
    if (!g->lines_changed[f]) continue;
    g->lines_changed[f] = false;
    pairs.clear();
    uint64_t line = 0;
    for (uint64_t count : g->line_counts[f]) {
      if (count) {
        pairs.push_back(line);
        pairs.push_back(count);
      }
      ++line;
    }
    g->writer.add(fmt::LineCountsRecord{g->files[f], "tex", pairs.size() / 2, pairs.data()});
    FlushIfLarge();
  }
  if (g->calls_changed) {
    g->calls_changed = false;
    for (int32_t cs : g->macros_bound) FlushCalls(g->macros.at(size_t(cs)));
    const std::vector<uint64_t>& triples = g->call_triples;
    for (size_t e = 0; e < triples.size(); e += 3) {
      if (triples[e]) WriteTraceFunction(uint32_t(triples[e]));
      WriteTraceFunction(uint32_t(triples[e + 1]));
      FlushIfLarge();
    }
    WriteFrames();
    fmt::CallCountsRecord r;
    r.time = now_ns;
    r.tid = tid;
    r.max_depth = g->max_depth;
    r.count = triples.size() / 3;
    r.triples = triples.data();
    g->writer.add(r);
  }
  // The command table: running totals, cost in ns (or tokens).
  std::vector<uint64_t> rows;
  std::vector<std::string_view> names;
  uint64_t total_slots = 0;
  for (int c = 0; c <= kCommandCount; ++c) total_slots += g->command_slots[c];
  if (total_slots != g->command_written) {
    g->command_written = total_slots;
    for (int c = 0; c <= kCommandCount; ++c) {
      if (!g->command_slots[c] && !g->command_cost[c]) continue;
      names.push_back(c == kCommandPhase ? std::string_view("[phase]")
                                         : std::string_view(kCommandNames[c]));
      rows.insert(rows.end(), {uint64_t(c), g->command_slots[c], to_ns(g->command_cost[c])});
    }
    fmt::TexCommandsRecord r;
    r.time = now_ns;
    r.count = names.size();
    r.names = names.data();
    r.rows = rows.data();
    g->writer.add(r);
  }
}

void Flush() {
  uint64_t now = __rdtsc();
  if (g->tokens_cost) now = hltex_tokens;
  Charge(now);
  uint64_t ticks = __rdtsc();
  WriteAccumulated(ticks, ClockNs(CLOCK_MONOTONIC));
  g->writer.flush();
  g->flush_deadline = ticks + g->flush_interval;
}

void FlushIfDue() {
  if (__builtin_expect(__rdtsc() >= g->flush_deadline, 0)) Flush();
}

void Finish(uint64_t code) {
  if (!g || g->finished) return;
  g->finished = true;
  Charge(Now());
  uint64_t now_ns = ClockNs(CLOCK_MONOTONIC);
  WriteAccumulated(__rdtsc(), now_ns);
  g->writer.add(fmt::ThreadEndRecord{now_ns, Tid(), ClockNs(CLOCK_PROCESS_CPUTIME_ID)});
  g->writer.add(fmt::EndRecord{now_ns, fmt::EndHow::kExit, code});
  g->writer.flush();
  if (g->writer.failed())
    std::fprintf(stderr, "hotline tex: writing %s failed: %s\n", g->output.c_str(),
                 g->writer.error());
  close(g->fd);
  g->fd = -1;
  hltex_active = 0;
}

void FinishAtExit() { Finish(0); }

// ---- The stack -------------------------------------------------------------------------------

inline void Push(Kind kind, uint32_t func, uint64_t caller_line, int32_t index) {
  Entry& e = g->stack.push();
  e.kind = kind;
  e.func = func;
  e.caller_line = caller_line;
  e.index = index;
  if (g->stack.size() > g->max_depth) g->max_depth = g->stack.size();
}

// A list (macro or hook) is entered, called from `line` of the innermost file (level `index`). A
// tail call to something already in the tail chain returns to it. The caller counts the call.
__attribute__((always_inline)) inline void EnterList(uint32_t func, int32_t ref, int32_t index,
                                                     int64_t line) {
  for (size_t i = g->stack.size(); i > 0 && g->stack[i - 1].tail; --i)
    if (g->stack[i - 1].func == func) {
      Entry again = g->stack[i - 1];
      g->stack.resize(i - 1);
      again.tail = false;
      again.ref = ref;
      g->stack.push() = again;
      return;
    }
  Push(Kind::kList, func, CallerLine(index, line), 0);
  g->stack.back().ref = ref;
}

// Counts a call of `func` (a hook) from the top of the stack.
void CountCall(uint32_t func) {
  if (!g->on) return;
  uint32_t caller = TopFunc();
  Func& f = g->funcs[func - 1];
  if (f.last_caller != caller) {
    f.last_caller = caller;
    f.last_edge = EdgeId(caller == g->root_func ? 0 : caller, func);
  }
  ++CallCount(f.last_edge);
  g->calls_changed = true;
}

// Drops the innermost list entry and the tail chain waiting for it.
void LeaveList() {
  size_t n = g->stack.size();
  while (n > 0 && g->stack[n - 1].kind != Kind::kList) --n;  // never: lists end in order
  if (n == 0) return;
  --n;
  while (n > 0 && g->stack[n - 1].tail) --n;
  g->stack.resize(n);
}

uint32_t& DefEpoch(int32_t ref) {
  return g->def_epochs[(uint32_t(ref) * 0x9E3779B1u) >> (32 - Profiler::kDefBucketBits)];
}

// The macro control sequence `cs` is called with body `ref`, and its binding may be out of date:
// its name (asked for once), the definition site of `ref` and the func they make, when any of
// them changed since its last call.
__attribute__((noinline)) void Rebind(Profiler::MacroSlot& slot, int32_t cs, int32_t ref) {
  uint32_t epoch = DefEpoch(ref);
  if (slot.func && slot.ref == ref && g->defs[slot.def].gen == slot.gen) {
    slot.epoch = epoch;  // another list of the bucket was defined
    return;
  }
  uint32_t& name = g->cs_names.at(size_t(cs));
  if (!name) {
    char text[512];
    hltex_glue_cs_name(cs, text, sizeof text);
    name = NameId(text);
  }
  if (slot.ref != ref || !slot.def) {
    slot.ref = ref;
    slot.def = g->defs.at(ref);  // ids stay what they are
  }
  const Def& def = g->defs[slot.def];
  uint32_t func = def.gen ? FuncId(name, def.file, def.line) : FuncId(name, g->unknown_file, 0);
  slot.gen = def.gen;
  slot.epoch = epoch;
  if (!slot.func) g->macros_bound.push_back(cs);
  if (func != slot.func) {
    FlushCalls(slot);
    slot.func = func;
    slot.edge = 0;
  }
}

}  // namespace

// ---- The interface ---------------------------------------------------------------------------

extern "C" {

void hltex_start(int argc, char** argv) {
  const char* output = getenv("HOTLINE_TEX_OUTPUT");
  if (!output || !*output || g) return;
  g = new Profiler;
  g->output = output;
  const char* cost = getenv("HOTLINE_TEX_COST");
  g->tokens_cost = cost && std::strcmp(cost, "tokens") == 0;
  const char* start = getenv("HOTLINE_TEX_START");
  g->on = !(start && std::strcmp(start, "no") == 0);
  g->fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (g->fd < 0) {
    std::fprintf(stderr, "hotline tex: cannot write %s: %s\n", output, std::strerror(errno));
    return;
  }
  g->start_ns = ClockNs(CLOCK_MONOTONIC);
  g->start_ticks = __rdtsc();
  uint64_t ns0 = ClockNs(CLOCK_MONOTONIC), t0 = __rdtsc();
  usleep(2000);
  uint64_t ns1 = ClockNs(CLOCK_MONOTONIC), t1 = __rdtsc();
  g->flush_interval = ns1 > ns0 ? (t1 - t0) * 1000000000ull / (ns1 - ns0) : 3000000000ull;
  g->flush_deadline = __rdtsc() + g->flush_interval;

  if (!g->writer.begin(g->fd,
                       fmt::kFeatureSamples | fmt::kFeatureTrace | fmt::kFeatureLineCounts)) {
    std::fprintf(stderr, "hotline tex: cannot write %s: %s\n", output, g->writer.error());
    close(g->fd);
    return;
  }
  std::vector<uint64_t> args;
  for (int i = 0; i < argc; ++i) args.push_back(g->writer.internString(argv[i]));
  fmt::ProcessRecord p;
  p.pid = uint64_t(getpid());
  p.ppid = uint64_t(getppid());
  timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  p.realtime_ns = uint64_t(rt.tv_sec) * 1000000000u + uint64_t(rt.tv_nsec);
  p.time = g->start_ns;
  p.exe = g->writer.internString(argc > 0 ? argv[0] : "pdftex");
  p.argc = args.size();
  p.argv = args.data();
  p.clock = fmt::ClockMode::kCpu;
  p.sampler = fmt::Sampler::kNone;
  p.period_ns = 1;
  p.flags = g->on ? 0 : uint64_t(fmt::kStartedPaused);
  p.trace = fmt::TraceMode::kCounts;
  g->writer.add(p);
  g->writer.add(fmt::ThreadStartRecord{g->start_ns, Tid(), 0, 0});
  if (g->tokens_cost)
    g->writer.add(fmt::NoteRecord{g->start_ns,
                                  "cost tokens: every nanosecond in this profile is one token "
                                  "TeX read or one command it ran, not time"});
  g->writer.flush();

  // Room reserved, not touched: the kernel gives the pages as they fill, and the tables never
  // copy themselves to grow in all but the largest runs.
  g->nodes.reserve(size_t(1) << 20);
  g->node_totals.reserve(size_t(1) << 20);
  g->frames.reserve(size_t(1) << 18);
  g->funcs.reserve(size_t(1) << 18);
  g->call_triples.reserve(size_t(3) << 18);
  g->terminal_file = FileId("(terminal)");
  g->pseudo_file = FileId("(scantokens)");
  g->system_file = FileId("system");
  g->unknown_file = FileId("(unknown)");
  g->root_func = FuncId("(tex)", g->terminal_file, 0);
  g->root_node = NodeId(0, DefFrame(g->root_func));
  // Until the first command: TeX's start (the format, kpathsea's file database), TeX's own.
  g->current = NodeId(g->root_node, DefFrame(FuncId("initialize", g->system_file, 0)));
  g->current_cmd = kCommandPhase;
  g->last = Now();
  hltex_active = 1;
  std::atexit(FinishAtExit);
}

void hltex_tick(void) {
  if (!hltex_active) return;
  if (g->tokens_cost) {
    Charge(hltex_tokens);
    g->fresh = true;
    FlushIfDue();
    return;
  }
  uint64_t now = __rdtsc();
  Charge(now);
  g->fresh = true;
  if (__builtin_expect(now >= g->flush_deadline, 0)) Flush();
}

namespace {
// A slot begins with command `cmd`; false when profiling is off.
inline bool BeginSlot(int cmd) {
  if (!g->fresh) Charge(Now());  // a slot that began without big_switch (main_loop's runs)
  g->fresh = false;
  if (cmd < 0 || cmd >= kCommandCount) cmd = 0;
  g->current_cmd = cmd;
  if (!g->on) return false;
  ++g->command_slots[cmd];
  return true;
}

// The slot goes to node `node`, and so to the line of its frame.
inline void ChargeSlotTo(uint32_t node) {
  g->current = node;
  ++g->node_totals[node - 1].slots;
}

// The slot is charged to the definition line of `top`, a list: the innermost macro's own body.
inline void ChargeDefinitionLine(Entry& top) {
  ChargeSlotTo(top.node ? top.node : NodeAt(g->stack.size() - 1, 0));
}

void Label(int cmd, uint32_t file, uint64_t line) {
  if (!BeginSlot(cmd)) return;
  LabelCache& cache = g->stack.empty() ? g->root_label : g->stack.back().label;
  if (cache.node && cache.file == file && cache.line == line) {
    ChargeSlotTo(cache.node);
    return;
  }
  if (!g->stack.empty()) {
    Entry& top = g->stack.back();
    const Func& f = g->funcs[top.func - 1];
    if (top.kind == Kind::kList && f.def_file == file && f.def_line == line) {
      ChargeDefinitionLine(top);
      return;
    }
  }
  uint32_t func = TopFunc();
  uint32_t base = g->stack.empty() ? 0 : BaseAt(g->stack.size() - 1);
  uint32_t node = NodeId(base, FrameId(func, file, line));
  ChargeSlotTo(node);
  cache = LabelCache{file, node, line};
}

uint32_t LevelFile(int32_t index, int32_t name_kind) {
  if (name_kind == 0) return g->terminal_file;
  if (name_kind == 2) return g->pseudo_file;
  if (index >= 0 && size_t(index) < g->file_at_index.size() && g->file_at_index[index])
    return g->file_at_index[index];
  return g->unknown_file;
}
}  // namespace

void hltex_label_list(int cmd, int32_t ref) {
  if (!hltex_active) return;
  // Mostly the innermost macro's own body, charged to its definition (its label cache never
  // holds that line).
  if (!g->stack.empty() && g->stack.back().kind == Kind::kList && g->stack.back().ref == ref) {
    if (BeginSlot(cmd)) ChargeDefinitionLine(g->stack.back());
    return;
  }
  const Def* def = g->defs.known(ref);
  if (!def)
    Label(cmd, g->unknown_file, 0);
  else
    Label(cmd, def->file, def->line);
}

void hltex_label_file(int cmd, int32_t index, int32_t name_kind, int64_t line) {
  if (!hltex_active) return;
  Label(cmd, LevelFile(index, name_kind), uint64_t(line < 0 ? 0 : line));
}

int hltex_known_list(int32_t ref) {
  if (!hltex_active) return 0;
  return g->defs.known(ref) ? 1 : 0;
}

void hltex_macro(int32_t cs, int32_t ref, int32_t index, int64_t line) {
  if (!hltex_active) return;
  if (cs < 0 || ref < 0) return;
  Profiler::MacroSlot& slot = g->macros.at(size_t(cs));
  if (__builtin_expect(!slot.func || slot.ref != ref || slot.epoch != DefEpoch(ref), 0))
    Rebind(slot, cs, ref);
  if (g->on) {
    uint32_t caller = TopFunc();
    if (__builtin_expect(slot.caller != caller || !slot.edge || slot.pending == UINT32_MAX, 0)) {
      FlushCalls(slot);
      slot.caller = caller;
      slot.edge = EdgeId(caller == g->root_func ? 0 : caller, slot.func);
    }
    ++slot.pending;
    g->calls_changed = true;
  }
  EnterList(slot.func, ref, index, line);
}

void hltex_hook_list(int32_t type, int32_t ref, const char* name, int32_t index, int64_t line) {
  (void)type;
  if (!hltex_active) return;
  const Def* def = g->defs.known(ref);
  uint32_t file = def ? def->file : g->unknown_file;
  uint64_t def_line = def ? def->line : 0;
  uint32_t func = FuncId(name, file, def_line);
  CountCall(func);
  EnterList(func, ref, index, line);
}

void hltex_end_list(int tail) {
  if (!hltex_active) return;
  if (tail) {
    // The level is gone but what it called has not begun: it waits on the stack.
    for (size_t i = g->stack.size(); i > 0; --i)
      if (g->stack[i - 1].kind == Kind::kList && !g->stack[i - 1].tail) {
        g->stack[i - 1].tail = true;
        return;
      }
    return;
  }
  LeaveList();
}

void hltex_file_begin(int32_t index, const char* name, int64_t caller_line) {
  if (!hltex_active || index < 0) return;
  uint32_t file = FileId(name);
  if (g->file_at_index.size() <= size_t(index)) g->file_at_index.resize(size_t(index) + 1);
  g->file_at_index[size_t(index)] = file;
  uint32_t func = FuncId(name, file, 0);
  uint32_t caller = TopFunc();
  if (g->on) {
    ++CallCount(EdgeId(caller == g->root_func ? 0 : caller, func));
    g->calls_changed = true;
  }
  Push(Kind::kFile, func, CallerLine(index - 1, caller_line), index);
}

void hltex_file_end(int32_t index) {
  if (!hltex_active) return;
  for (size_t i = g->stack.size(); i > 0; --i)
    if (g->stack[i - 1].kind == Kind::kFile && g->stack[i - 1].index == index) {
      g->stack.resize(i - 1);
      break;
    }
  if (index >= 0 && size_t(index) < g->file_at_index.size()) g->file_at_index[size_t(index)] = 0;
}

void hltex_def_begin(int32_t index, int32_t name_kind, int64_t line) {
  if (!hltex_active) return;
  g->pending_def.file = LevelFile(index, name_kind);
  g->pending_def.line = uint64_t(line < 0 ? 0 : line);
  g->def_pending = true;
}

void hltex_def_end(int32_t ref) {
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

void hltex_phase_begin(int phase) {
  if (!hltex_active || phase < 1 || phase > 5) return;
  Charge(Now());
  g->phase_saved.emplace_back(g->current, g->current_cmd);
  uint32_t func = FuncId(kPhaseNames[phase], g->system_file, uint64_t(phase));
  g->current = NodeId(g->current, DefFrame(func));
  g->current_cmd = kCommandPhase;
  if (g->on) {
    ++g->command_slots[kCommandPhase];
    ++g->node_totals[g->current - 1].slots;
  }
}

void hltex_phase_end(int phase) {
  if (!hltex_active || phase < 1 || phase > 5 || g->phase_saved.empty()) return;
  Charge(Now());
  g->current = g->phase_saved.back().first;
  g->current_cmd = g->phase_saved.back().second;
  g->phase_saved.pop_back();
}

void hltex_profile(int on) {
  if (!hltex_active) return;
  Charge(Now());
  if (bool(on) == g->on) return;
  g->on = on != 0;
  uint64_t now_ns = ClockNs(CLOCK_MONOTONIC);
  g->writer.add(fmt::StateRecord{now_ns, Tid(), uint64_t(g->on), fmt::StateSource::kApi});
}

// The sites file: "HLTXSIT1", the number of file names and of sites (u32 each), the names (u32
// length, bytes), zeros to a multiple of 4 bytes, then the FormatSites by ref, in the machine's
// byte order: the engine that dumps a format is the one that loads it. Loading maps the file and
// uses its sites where they are: LaTeX's 45,000 cost no parsing and no copy.
namespace {
constexpr char kSitesMagic[8] = {'H', 'L', 'T', 'X', 'S', 'I', 'T', '1'};
}  // namespace

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

void hltex_finish(int exit_code) {
  if (!hltex_active) return;
  Finish(uint64_t(exit_code));
}

}  // extern "C"

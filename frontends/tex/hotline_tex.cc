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
// Written with hotline's streaming writer: FRAME records (a macro at its definition, a file at
// a line, a phase of TeX in the pseudo file `system`), STACK_NODEs, one SAMPLE per node and
// flush carrying its nanoseconds (or tokens, --cost tokens), LINE_COUNTS of slots per line,
// CALL_COUNTS of macro calls per edge, and TEX_COMMANDS (slots and cost per command code).
#include "hotline_tex.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
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

// Open addressing from a pair of integers to an id (0 = none): the stack nodes, frames and call
// edges the hooks ask for, without an allocation per entry. TeX's line numbers and every id here
// are 32-bit. The slots come from calloc, whose large blocks are pages the kernel zeroes when
// first touched: a table made large enough not to grow in most runs costs only what is used.
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
    void operator()(Slot* p) const { std::free(p); }
  };
  static size_t Hash(uint64_t a, uint64_t b) {
    uint64_t h = (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full);
    return size_t(h ^ (h >> 29));
  }
  void Allocate(size_t size) {
    Slot* p = static_cast<Slot*>(std::calloc(size, sizeof(Slot)));
    if (!p) std::abort();  // as operator new would, without exceptions
    slots_.reset(p);
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

// What the lookups read of a stack node: 16 bytes, four to a cache line. Its cost and its id in
// the writer are in arrays of their own (Profiler::node_cost, node_written), which the lookups
// never touch.
struct Node {
  uint32_t parent = 0;  // 1-based, 0 = outermost
  uint32_t frame = 0;   // 1-based
  // Its first child (by frame): most nodes have one, found here without hashing; the others
  // are in node_by_key.
  uint32_t first_frame = 0, first_child = 0;
};

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
  // The entry at `i` if its page exists, else null.
  T* find(size_t i) const {
    size_t page = i / kPerPage;
    if (page >= pages_.size() || !pages_[page]) return nullptr;
    return &pages_[page][i % kPerPage];
  }
  template <typename F>
  void forEach(F&& f) {
    for (T* page : pages_)
      if (page)
        for (size_t i = 0; i < kPerPage; ++i) f(page[i]);
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

// Definition sites by TeX token list (its reference count node, an index into TeX's memory):
// an id per token list ever defined (in the order first seen), the sites in a vector by id. The
// vectors are reserved: pages the kernel gives as they fill, never copied.
class DefTable {
 public:
  DefTable() {
    defs_.reserve(size_t(1) << 18);
    refs_.reserve(size_t(1) << 18);
  }
  // The id of `ref`'s entry, made (gen 0: unknown) if needed; 0 for a negative ref.
  uint32_t at(int32_t ref) {
    if (ref < 0) return 0;
    uint32_t& id = ids_.at(size_t(ref));
    if (!id) {
      defs_.emplace_back();
      refs_.push_back(ref);
      id = uint32_t(defs_.size());
    }
    return id;
  }
  Def& operator[](uint32_t id) { return defs_[id - 1]; }
  // The entry of `ref` when it has a known site, else null.
  const Def* known(int32_t ref) const {
    if (ref < 0) return nullptr;
    const uint32_t* id = ids_.find(size_t(ref));
    if (!id || !*id) return nullptr;
    const Def& d = defs_[*id - 1];
    return d.gen ? &d : nullptr;
  }
  template <typename F>
  void forEachKnown(F&& f) const {
    for (size_t i = 0; i < defs_.size(); ++i)
      if (defs_[i].gen) f(refs_[i], defs_[i]);
  }

 private:
  PagedArray<uint32_t> ids_;  // by ref: 1 + index into defs_, 0 for none
  std::vector<Def> defs_;
  std::vector<int32_t> refs_;
};

enum class Kind : uint8_t { kList, kFile, kPhase };

// The last location a slot was labelled at under one stack entry, and what it resolved to: the
// entry's callers never change while it is on the stack, so this holds until it is popped.
struct LabelCache {
  uint32_t file = 0;
  uint32_t node = 0;  // 0: empty
  uint64_t line = 0;
  uint64_t* count = nullptr;
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
  uint64_t caller_line = 0;       // the line of the entry below (a file) when this one began
  int32_t index = 0;              // files: TeX's input level (in_open)
  uint64_t* def_count = nullptr;  // the slot count of its definition line, once labelled there
  int32_t ref = 0;                // lists: TeX's token list (its reference count node)
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
    e.def_count = nullptr;
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
  std::vector<uint64_t> node_cost;     // by node id - 1: ticks (or tokens) since the last flush
  std::vector<uint64_t> node_written;  // by node id - 1: its writer id, 0 until written
  PairIndex node_by_key{16};           // (parent, frame) of the nodes not first children
  DefTable defs;                       // token list (its reference count node) → site
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
  PagedArray<MacroSlot> macros;   // by control sequence (an eqtb index)
  PagedArray<uint32_t> cs_names;  // by control sequence: its name id, once asked for
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
  // Slots per line, by file id - 1, indexed by line: a deque grows at its end without moving
  // what it holds, so the label path keeps pointers to counts.
  std::vector<std::deque<uint64_t>> line_counts;
  std::vector<bool> lines_changed;
  // Calls per edge (caller func, or 0 for the top level; callee func): the edge's id in
  // call_index, its count in call_counts.
  PairIndex call_index{15};
  std::vector<std::pair<uint32_t, uint32_t>> call_edges;  // edge id - 1
  std::vector<uint64_t> call_counts;                      // edge id - 1
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
  std::deque<uint64_t>& counts = g->line_counts[file - 1];
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
    const Node& p = g->nodes[parent - 1];
    if (p.first_frame == frame) return p.first_child;
    if (!p.first_child) {
      uint32_t id = uint32_t(g->nodes.size() + 1);
      g->nodes[parent - 1].first_frame = frame;
      g->nodes[parent - 1].first_child = id;
      g->nodes.push_back(Node{parent, frame});
      g->node_cost.push_back(0);
      return id;
    }
  }
  bool added = false;
  uint32_t id = g->node_by_key.findOrAdd(parent, frame, uint32_t(g->nodes.size() + 1), &added);
  if (added) {
    g->nodes.push_back(Node{parent, frame});
    g->node_cost.push_back(0);
  }
  return id;
}

// The id of the call edge (caller func, or 0 for the top level; callee func).
uint32_t EdgeId(uint32_t caller, uint32_t callee) {
  bool added = false;
  uint32_t id = g->call_index.findOrAdd(caller, callee, uint32_t(g->call_edges.size() + 1), &added);
  if (added) {
    g->call_edges.emplace_back(caller, callee);
    g->call_counts.push_back(0);
  }
  return id;
}

uint64_t& CallCount(uint32_t caller, uint32_t callee) {
  return g->call_counts[EdgeId(caller, callee) - 1];
}

// Adds a control sequence's pending calls to its edge.
void FlushCalls(Profiler::MacroSlot& slot) {
  if (!slot.pending) return;
  g->call_counts[slot.edge - 1] += slot.pending;
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
  g->node_cost[g->current - 1] += spent;
  g->command_cost[g->current_cmd] += spent;
}

void FlushIfDue();

// ---- Writing ---------------------------------------------------------------------------------

uint64_t CostToNs(uint64_t cost, uint64_t now_ticks, uint64_t now_ns) {
  if (g->tokens_cost) return cost;
  uint64_t span_ticks = now_ticks - g->start_ticks;
  uint64_t span_ns = now_ns - g->start_ns;
  if (span_ticks == 0) return 0;
  return uint64_t((unsigned __int128)cost * span_ns / span_ticks);
}

const std::string& FileName(uint32_t id) {
  static const std::string none;
  return id ? g->files[id - 1] : none;
}

void WriteFrame(uint32_t id) {
  Frame& f = g->frames[id - 1];
  if (f.written) return;
  f.written = true;
  const Func& func = g->funcs[f.func - 1];
  fmt::FrameRecord r;
  r.id = id;
  r.name = g->names[func.name - 1];
  r.file = FileName(f.file);
  r.line = f.line;
  r.def_file = FileName(func.def_file);
  r.def_line = func.def_line;
  r.module = "tex";
  g->writer.add(r);
}

uint64_t WriteNode(uint32_t id) {
  if (g->node_written[id - 1]) return g->node_written[id - 1];
  const Node n = g->nodes[id - 1];
  uint64_t parent = n.parent ? WriteNode(n.parent) : 0;
  WriteFrame(n.frame);
  g->node_written[id - 1] = g->writer.addNewStackNode(parent, fmt::kNamedFrameTag | n.frame);
  return g->node_written[id - 1];
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

void WriteAccumulated(uint64_t now_ticks, uint64_t now_ns) {
  uint64_t tid = Tid();
  g->node_written.resize(g->nodes.size());  // room for the ids of the nodes made since
  for (uint32_t i = 1; i <= g->nodes.size(); ++i) {
    uint64_t& cost = g->node_cost[i - 1];
    if (!cost) continue;
    uint64_t ns = CostToNs(cost, now_ticks, now_ns);
    cost = 0;
    if (!ns) continue;
    fmt::SampleRecord s;
    s.time = now_ns;
    s.tid = tid;
    s.node = WriteNode(i);
    s.weight = ns;
    g->writer.add(s);
  }
  std::vector<uint64_t> pairs;
  for (size_t f = 0; f < g->files.size(); ++f) {
    if (!g->lines_changed[f]) continue;
    g->lines_changed[f] = false;
    pairs.clear();
    const std::deque<uint64_t>& counts = g->line_counts[f];
    for (size_t line = 0; line < counts.size(); ++line)
      if (counts[line]) pairs.insert(pairs.end(), {uint64_t(line), counts[line]});
    g->writer.add(fmt::LineCountsRecord{g->files[f], "tex", pairs.size() / 2, pairs.data()});
  }
  if (g->calls_changed) {
    g->calls_changed = false;
    g->macros.forEach([](Profiler::MacroSlot& slot) { FlushCalls(slot); });
    std::vector<uint64_t> triples;
    for (size_t e = 0; e < g->call_edges.size(); ++e) {
      auto [caller, callee] = g->call_edges[e];
      if (caller) WriteTraceFunction(caller);
      WriteTraceFunction(callee);
      triples.insert(triples.end(), {caller, callee, g->call_counts[e]});
    }
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
      rows.insert(rows.end(), {uint64_t(c), g->command_slots[c],
                               CostToNs(g->command_cost[c], now_ticks, now_ns)});
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
  ++g->call_counts[f.last_edge - 1];
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
  g->node_cost.reserve(size_t(1) << 20);
  g->frames.reserve(size_t(1) << 18);
  g->funcs.reserve(size_t(1) << 18);
  g->call_edges.reserve(size_t(1) << 18);
  g->call_counts.reserve(size_t(1) << 18);
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
void Label(int cmd, uint32_t file, uint64_t line) {
  if (!g->fresh) Charge(Now());  // a slot that began without big_switch (main_loop's runs)
  g->fresh = false;
  if (cmd < 0 || cmd >= kCommandCount) cmd = 0;
  g->current_cmd = cmd;
  if (!g->on) return;
  ++g->command_slots[cmd];
  LabelCache& cache = g->stack.empty() ? g->root_label : g->stack.back().label;
  if (cache.node && cache.file == file && cache.line == line) {
    g->current = cache.node;
    ++*cache.count;
    return;
  }
  // Most slots come from the innermost macro's own body: its node is known since its call.
  if (!g->stack.empty()) {
    Entry& top = g->stack.back();
    const Func& f = g->funcs[top.func - 1];
    if (top.kind == Kind::kList && f.def_file == file && f.def_line == line) {
      if (!top.def_count) top.def_count = &LineCount(file, line);
      g->current = NodeAt(g->stack.size() - 1, 0);
      ++*top.def_count;
      g->lines_changed[file - 1] = true;
      return;
    }
  }
  uint32_t func = TopFunc();
  uint32_t base = g->stack.empty() ? 0 : BaseAt(g->stack.size() - 1);
  uint32_t node = NodeId(base, FrameId(func, file, line));
  g->current = node;
  g->lines_changed[file - 1] = true;
  uint64_t* count = &LineCount(file, line);
  ++*count;
  cache = LabelCache{file, node, line, count};
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
  // Mostly the innermost macro's own body: its definition is its func's.
  if (!g->stack.empty() && g->stack.back().kind == Kind::kList && g->stack.back().ref == ref) {
    const Func& f = g->funcs[g->stack.back().func - 1];
    Label(cmd, f.def_file, f.def_line);
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
    ++CallCount(caller == g->root_func ? 0 : caller, func);
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
  uint32_t id = g->defs.at(ref);
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
    ++LineCount(g->system_file, uint64_t(phase));
    g->lines_changed[g->system_file - 1] = true;
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

// The sites file: a line "= FILE" names the file of the lines "REF LINE" after it (a run of
// definitions from one file, as a format's are: LaTeX's 45,000 come in 700 runs). Lines
// "REF LINE FILE" (the file on every line) are read too.
void hltex_format_dumped(const char* fmt_path) {
  if (!hltex_active) return;
  std::string path = std::string(fmt_path) + ".hotline-defs";
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "hotline tex: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    return;
  }
  uint32_t last_file = 0;
  g->defs.forEachKnown([f, &last_file](int32_t ref, const Def& def) {
    if (def.file != last_file || !last_file) {
      last_file = def.file;
      std::fprintf(f, "= %s\n", FileName(def.file).c_str());
    }
    std::fprintf(f, "%d %llu\n", ref, (unsigned long long)def.line);
  });
  std::fclose(f);
}

namespace {
// The decimal number at `*p` (advanced past it); false when there is none.
bool Decimal(const char** p, const char* end, uint64_t* value) {
  const char* q = *p;
  uint64_t v = 0;
  while (q < end && *q >= '0' && *q <= '9') v = v * 10 + uint64_t(*q++ - '0');
  if (q == *p) return false;
  *p = q;
  *value = v;
  return true;
}
}  // namespace

void hltex_format_loaded(const char* fmt_path) {
  if (!hltex_active) return;
  std::string path = std::string(fmt_path) + ".hotline-defs";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;  // a format not made by this engine: its macros' sites are unknown
  // Read whole, in one piece, then one line at a time from memory.
  struct stat st;
  std::string text;
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    text.resize(size_t(st.st_size));
    size_t got = 0;
    for (ssize_t n; got < text.size() && (n = read(fd, &text[got], text.size() - got)) > 0;)
      got += size_t(n);
    text.resize(got);
  }
  close(fd);
  uint32_t file = 0;
  std::string_view last_name;
  const char* end = text.data() + text.size();
  for (const char* at = text.data(); at < end;) {
    const char* eol = static_cast<const char*>(std::memchr(at, '\n', size_t(end - at)));
    if (!eol) eol = end;
    const char* p = at;
    at = eol + 1;
    if (eol - p >= 2 && p[0] == '=' && p[1] == ' ') {
      file = FileId(std::string(p + 2, eol));
      continue;
    }
    uint64_t ref = 0, def_line = 0;
    if (!Decimal(&p, eol, &ref) || p == eol || *p != ' ') continue;
    ++p;
    if (!Decimal(&p, eol, &def_line) || ref > uint64_t(INT32_MAX)) continue;
    if (p != eol) {  // "REF LINE FILE"
      if (*p != ' ') continue;
      std::string_view name(p + 1, size_t(eol - (p + 1)));
      if (name != last_name || !file) {
        last_name = name;
        file = FileId(std::string(name));
      }
    }
    if (!file) continue;
    if (uint32_t id = g->defs.at(int32_t(ref))) {
      g->defs[id] = Def{file, 1, def_line};
      ++DefEpoch(int32_t(ref));
    }
  }
}

void hltex_finish(int exit_code) {
  if (!hltex_active) return;
  Finish(uint64_t(exit_code));
}

}  // extern "C"

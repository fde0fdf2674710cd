// What the parts of the hook library share (hotline_tex.cc says what each part does): the one
// Profiler, the profile's entities and the logical stack's entries, and the helpers more than one
// part calls. Internal: only the library's own files include it.
#pragma once

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "def_sites.h"
#include "format/schema.h"
#include "format/writer.h"
#include "hotline_tex.h"
#include "tables.h"

namespace hotline::tex {

namespace fmt = hotline::format;

inline uint64_t ClockNs(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// pdfTeX's command codes, 0 to kCommandCount - 1: their names are in profile_writer.cc, which
// checks that there are this many.
constexpr int kCommandCount = 103;
// Slots that are not commands of main_control: TeX's own phases.
constexpr int kCommandPhase = kCommandCount;

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
  // Time off the CPU (another program had it) is nobody's: the ticks since the thread's CPU
  // clock was last read, that clock then, the clock's rate, and how many ticks a slot must
  // last to be checked against it (slots.cc: OnCpuPart).
  uint64_t ticks_since_cpu_check = 0, cpu_at_check = 0, ticks_per_s = 0;
  uint64_t cpu_check_ticks = UINT64_MAX;
  uint64_t flush_deadline = 0, flush_interval = 0;
  bool fresh = false;  // a clock read since the last label: the next label needs none

  std::vector<std::string> files;  // file id - 1
  std::unordered_map<std::string, uint32_t> file_by_name;
  std::vector<uint32_t> file_at_index;  // TeX's in_open level → file id
  uint32_t terminal_file = 0, pseudo_file = 0, unknown_file = 0;
  // TeX's own phases each in a pseudo file of its own, `system ship_out`, ..., so that a line
  // table names them as texprofile does (`system shipout`); 0 until first used.
  uint32_t phase_files[6] = {};

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
  // Lists popped as tail calls that no macro call has taken yet: \expandafter's put-back
  // macro may go unexpanded (\noexpand, a \protected macro in an \edef); the next other event
  // ends them (macro_stack.cc: DropUnclaimedTails).
  bool tails_unclaimed = false;
  uint64_t max_depth = 0;
  uint64_t command_slots[kCommandCount + 1] = {};
  uint64_t command_cost[kCommandCount + 1] = {};  // ticks, converted when written
  uint64_t command_written = 0;
};

// The one profiler of the run, made by hltex_start (hotline_tex.cc); null when no profile is
// being written.
extern Profiler* g;

inline uint64_t Now() { return g->tokens_cost ? hltex_tokens : __rdtsc(); }

inline uint64_t Tid() { return uint64_t(syscall(SYS_gettid)); }

inline uint32_t TopFunc() { return g->stack.empty() ? g->root_func : g->stack.back().func; }

// The count of call edge `id`.
inline uint64_t& CallCount(uint32_t id) { return g->call_triples[3 * (id - 1) + 2]; }

// Adds a control sequence's pending calls to its edge.
inline void FlushCalls(Profiler::MacroSlot& slot) {
  if (!slot.pending) return;
  CallCount(slot.edge) += slot.pending;
  slot.pending = 0;
}

inline uint32_t& DefEpoch(int32_t ref) {
  return g->def_epochs[(uint32_t(ref) * 0x9E3779B1u) >> (32 - Profiler::kDefBucketBits)];
}

uint64_t OnCpuPart(uint64_t spent);

inline void Charge(uint64_t now) {
  uint64_t spent = now - g->last;
  g->last = now;
  if (!g->tokens_cost) {
    g->ticks_since_cpu_check += spent;
    if (__builtin_expect(spent > g->cpu_check_ticks, 0)) spent = OnCpuPart(spent);
  }
  if (!g->on || !g->current) return;
  g->node_totals[g->current - 1].cost += spent;
  g->command_cost[g->current_cmd] += spent;
}

// macro_stack.cc: the profile's files, names, functions, frames and stack nodes, each made once
// and known by its id (1-based), and the nodes of the logical stack's entries.
uint32_t FileId(const std::string& name);
uint32_t NameId(const std::string& text);
uint32_t FuncId(uint32_t name, uint32_t def_file, uint64_t def_line);
uint32_t FuncId(const std::string& name, uint32_t def_file, uint64_t def_line);
// Counts a call of `func` (a hook, a phase of TeX's own) from the top of the macro stack.
void CountCall(uint32_t func);
uint32_t FrameId(uint32_t func, uint32_t file, uint64_t line);
uint32_t NodeId(uint32_t parent, uint32_t frame);
uint32_t NodeAt(size_t i, uint64_t line);
uint32_t BaseAt(size_t i);

inline uint32_t DefFrame(uint32_t func) {
  Func& f = g->funcs[func - 1];
  if (!f.def_frame) f.def_frame = FrameId(func, f.def_file, f.def_line);
  return f.def_frame;
}

// slots.cc: the file TeX's input level `index` reads (name_kind: 0 the terminal, 2 a pseudo
// file).
uint32_t LevelFile(int32_t index, int32_t name_kind);

// profile_writer.cc: a file id's name, and writing what accumulated, now or at the end.
const std::string& FileName(uint32_t id);
void Flush();
void Finish(uint64_t code);

inline void FlushIfDue() {
  if (__builtin_expect(__rdtsc() >= g->flush_deadline, 0)) Flush();
}

}  // namespace hotline::tex

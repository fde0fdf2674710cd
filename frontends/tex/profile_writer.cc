// The profile, written with hotline's streaming writer: frames (a macro at its definition, a file
// at a line, a phase of TeX in the pseudo file `system`) in FRAMES runs, stack nodes in
// STACK_NODES runs, one sample per node and flush carrying its nanoseconds (or tokens, --cost
// tokens) in SAMPLES runs, LINE_COUNTS of slots per line, CALL_COUNTS of macro calls per edge,
// and TEX_COMMANDS (slots and cost per command code).
#include <unistd.h>
#include <x86intrin.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "hooks_internal.h"
#include "hotline_tex.h"

namespace hotline::tex {
namespace {

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
static_assert(int(sizeof kCommandNames / sizeof kCommandNames[0]) == kCommandCount);

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

}  // namespace

const std::string& FileName(uint32_t id) {
  static const std::string none;
  return id ? g->files[id - 1] : none;
}

namespace {

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

// Writes the pending records once they fill a chunk of 256 KiB: the writer's buffer stays that
// size instead of growing (copied, and its pages faulted in) to hold a whole flush's records.
void FlushIfLarge() {
  if (g->writer.pendingBytes() >= (size_t(256) << 10)) g->writer.flush();
}

uint64_t& LineCount(uint32_t file, uint64_t line) {
  std::vector<uint64_t>& counts = g->line_counts[file - 1];
  if (line >= counts.size()) counts.resize(line + 1);
  return counts[line];
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

}  // namespace

void Flush() {
  uint64_t now = __rdtsc();
  if (g->tokens_cost) now = hltex_tokens;
  Charge(now);
  uint64_t ticks = __rdtsc();
  WriteAccumulated(ticks, ClockNs(CLOCK_MONOTONIC));
  g->writer.flush();
  g->flush_deadline = ticks + g->flush_interval;
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

}  // namespace hotline::tex

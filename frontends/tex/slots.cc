// The slots (hotline_tex.cc says what one is): the clock read at big_switch, each slot's label
// (its command, the file and line its token came from, its stack node), TeX's own phases, and
// \profileon/\profileoff.
#include <time.h>
#include <x86intrin.h>

#include <cstddef>
#include <cstdint>

#include "hooks_internal.h"
#include "hotline_tex.h"

namespace hotline::tex {
namespace {

const char* const kPhaseNames[] = {"",           "ship_out",  "line_break",
                                   "build_page", "init_trie", "close_files_and_terminate"};

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

}  // namespace

// A slot long enough to hold a preemption: the thread's CPU clock says how much of the time
// since its last read the engine ran. What it did not (descheduled while another program had
// the CPU) lies in this slot, the slots between being too short to hold a scheduler's slice, and
// is taken off it: the profile's time is the engine's CPU time, as texprof's is.
uint64_t OnCpuPart(uint64_t spent) {
  uint64_t cpu = ClockNs(CLOCK_THREAD_CPUTIME_ID);
  auto cpu_ticks =
      uint64_t((unsigned __int128)(cpu - g->cpu_at_check) * g->ticks_per_s / 1000000000u);
  uint64_t elapsed = g->ticks_since_cpu_check;
  g->cpu_at_check = cpu;
  g->ticks_since_cpu_check = 0;
  if (elapsed <= cpu_ticks) return spent;
  uint64_t off = elapsed - cpu_ticks;
  return spent > off ? spent - off : 0;
}

namespace {

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

}  // namespace

uint32_t LevelFile(int32_t index, int32_t name_kind) {
  if (name_kind == 0) return g->terminal_file;
  if (name_kind == 2) return g->pseudo_file;
  if (index >= 0 && size_t(index) < g->file_at_index.size() && g->file_at_index[index])
    return g->file_at_index[index];
  return g->unknown_file;
}

}  // namespace hotline::tex

using namespace hotline::tex;

extern "C" {

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

void hltex_phase_begin(int phase) {
  if (!hltex_active || phase < 1 || phase > 5) return;
  Charge(Now());
  g->phase_saved.emplace_back(g->current, g->current_cmd);
  uint32_t& file = g->phase_files[phase];
  if (!file) file = FileId(std::string("system ") + kPhaseNames[phase]);
  uint32_t func = FuncId(kPhaseNames[phase], file, 0);
  CountCall(func);  // exact, as a macro's calls are
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

}  // extern "C"

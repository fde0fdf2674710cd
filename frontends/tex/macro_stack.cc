// The logical stack of macros, token-list hooks and \input files, and the profile's entities it
// resolves to: files, names, functions, frames, stack nodes and call edges.
//
// TeX pops a macro before its last token's callee runs (the tail call of macro_call); the stack
// here keeps such a macro until the callee ends, as texprof's logical depth does, and a macro
// tail-calling a macro already in its tail chain (\loop's \iterate/\next) returns to that
// entry, so the stack stays as deep as the distinct macros (and one more for a macro calling
// itself, whose recursion then has a self edge).
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/caret_notation.h"
#include "hooks_internal.h"
#include "hotline_tex.h"

namespace hotline::tex {

uint32_t FileId(const std::string& name) {
  auto [it, added] = g->file_by_name.try_emplace(name, uint32_t(g->files.size() + 1));
  if (added) {
    g->files.push_back(name);
    g->line_counts.emplace_back();
    g->lines_changed.push_back(false);
  }
  return it->second;
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

namespace {

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

// The line the top of the stack calls from, `line` being the line the innermost file is at
// (TeX's `line`, for level `index`): a file's line is noted when it is its own level's.
uint64_t CallerLine(int32_t index, int64_t line) {
  if (g->stack.empty()) return 0;
  Entry& top = g->stack.back();
  if (top.kind == Kind::kFile && top.index == index && line > 0) top.line = uint64_t(line);
  return top.line;
}

}  // namespace

// Counts a call of `func` (a hook, a phase of TeX's own) from the top of the stack.
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

namespace {

inline void Push(Kind kind, uint32_t func, uint64_t caller_line, int32_t index) {
  Entry& e = g->stack.push();
  e.kind = kind;
  e.func = func;
  e.caller_line = caller_line;
  e.index = index;
  if (g->stack.size() > g->max_depth) g->max_depth = g->stack.size();
}

// A list (macro or hook) is entered, called from `line` of the innermost file (level `index`). A
// tail call to something already in the tail chain returns to it, but for a macro calling itself
// last (\loop's \next, `\expandafter\a\fi`): its second activation is kept above the first,
// so that the recursion's time shows on its self edge (as in texprof's call graph), and every
// later one returns to the second. The caller counts the call.
__attribute__((always_inline)) inline void EnterList(uint32_t func, int32_t ref, int32_t index,
                                                     int64_t line) {
  size_t top = g->stack.size();
  for (size_t i = top; i > 0 && g->stack[i - 1].tail; --i)
    if (g->stack[i - 1].func == func) {
      if (i == top && (i == 1 || g->stack[i - 2].func != func)) break;
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


// Tail-popped lists that no macro call took: they simply ended.
void DropUnclaimedTails() {
  if (!g->tails_unclaimed) return;
  g->tails_unclaimed = false;
  size_t n = g->stack.size();
  while (n > 0 && g->stack[n - 1].tail) --n;
  g->stack.resize(n);
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
    // As TeX shows it on the terminal (\show, error messages): plain's control-return is
    // `\^^M`, never a raw CR. TeX printed it into its string pool, where characters go raw.
    name = NameId(base::CaretNotation(text));
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
}  // namespace hotline::tex

using namespace hotline::tex;

extern "C" {

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
  g->tails_unclaimed = false;  // this call took them
}

void hltex_hook_list(int32_t type, int32_t ref, const char* name, int32_t index, int64_t line) {
  (void)type;
  if (!hltex_active) return;
  DropUnclaimedTails();
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
        g->tails_unclaimed = true;
        return;
      }
    return;
  }
  DropUnclaimedTails();
  LeaveList();
}

void hltex_file_begin(int32_t index, const char* name, int64_t caller_line) {
  if (!hltex_active || index < 0) return;
  DropUnclaimedTails();
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
  DropUnclaimedTails();
  for (size_t i = g->stack.size(); i > 0; --i)
    if (g->stack[i - 1].kind == Kind::kFile && g->stack[i - 1].index == index) {
      g->stack.resize(i - 1);
      break;
    }
  if (index >= 0 && size_t(index) < g->file_at_index.size()) g->file_at_index[size_t(index)] = 0;
}

}  // extern "C"

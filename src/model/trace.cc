#include "model/trace.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/varint.h"

namespace hotline::model {
namespace {

struct TimedFrame {
  FunctionId fn;
  uint64_t trace_id = 0;
  uint64_t start_ns = 0;
  uint64_t child_ns = 0;
  std::optional<uint64_t> size;  // hotline_size() tagged this call
};

// SIZE records of calls, by (thread, entry tick): the last one of a call counts.
using CallSizes = std::map<std::pair<uint64_t, uint64_t>, std::pair<uint64_t, uint64_t>>;

struct Timing {
  uint64_t calls = 0, inclusive = 0, self = 0, min = UINT64_MAX, max = 0, sum = 0;
};

// Replays one thread's entry/exit stream into exact per-function times.
class ThreadReplay {
 public:
  ThreadReplay(std::unordered_map<uint32_t, Timing>& timings, uint64_t* total, uint64_t tid,
               std::vector<TracedCall>* calls, const CallSizes* sizes,
               std::vector<SizedCall>* sized)
      : timings_(timings), total_(total), tid_(tid), calls_(calls), sizes_(sizes), sized_(sized) {}

  // The stream's entries are the thread's calls (it has no CALL_COUNTS): counted per function
  // and per edge from the innermost open call, but for the first `uncounted` entries (the frames
  // a forked child re-enters).
  void countCalls(std::unordered_map<uint32_t, uint64_t>* calls,
                  std::map<std::pair<uint32_t, uint32_t>, uint64_t>* edges, uint64_t uncounted) {
    count_calls_ = calls;
    count_edges_ = edges;
    uncounted_ = uncounted;
  }
  size_t maxDepth() const { return max_depth_; }

  // `from`: the function a call from untraced code came from (the innermost frame at its call
  // site; invalid when none is known), where otherwise the innermost open call made it.
  void enter(FunctionId fn, uint64_t ns, uint64_t trace_id, uint64_t tick,
             std::optional<FunctionId> from) {
    if (count_calls_ && uncounted_ > 0) {
      --uncounted_;
    } else if (count_calls_ && fn.valid()) {
      ++(*count_calls_)[fn.index()];
      FunctionId caller = from ? *from : stack_.empty() ? FunctionId() : stack_.back().fn;
      if (caller.valid()) ++(*count_edges_)[{caller.index(), fn.index()}];
    }
    max_depth_ = std::max(max_depth_, stack_.size() + 1);
    std::optional<uint64_t> size;
    if (!sizes_->empty()) {
      auto it = sizes_->find({tid_, tick});
      if (it != sizes_->end() && it->second.first == trace_id) size = it->second.second;
    }
    last_callee_[callerTraceId()] = trace_id;
    stack_.push_back(TimedFrame{fn, trace_id, ns, 0, size});
    if (fn.valid()) ++active_[fn.index()];
    last_ns_ = ns;
  }

  void exit(uint64_t ns) {
    last_ns_ = ns;
    if (stack_.empty()) return;  // the stream began inside a call: nothing to close
    TimedFrame f = stack_.back();
    stack_.pop_back();
    uint64_t duration = ns >= f.start_ns ? ns - f.start_ns : 0;
    // A frame of a function the symbolizer could not place still has to be popped, or every
    // later exit would close the wrong frame. Its own time stays in its caller's self time; the
    // time of the traced calls below it is passed up, so Σ self = total still holds.
    if (!f.fn.valid()) {
      if (!stack_.empty()) {
        stack_.back().child_ns += f.child_ns;
      } else {
        *total_ += f.child_ns;
      }
      return;
    }
    if (f.size) sized_->push_back(SizedCall{f.fn, *f.size, duration});
    if (calls_)
      calls_->push_back(
          TracedCall{tid_, f.fn, f.start_ns, f.start_ns + duration, uint32_t(stack_.size())});
    Timing& t = timings_[f.fn.index()];
    ++t.calls;
    t.min = std::min(t.min, duration);
    t.max = std::max(t.max, duration);
    t.sum += duration;
    t.self += duration >= f.child_ns ? duration - f.child_ns : 0;
    if (--active_[f.fn.index()] == 0) t.inclusive += duration;  // outermost activation only
    if (!stack_.empty()) {
      stack_.back().child_ns += duration;
    } else {
      *total_ += duration;
    }
  }

  // TRACE_EVENTS_SHORT: the function the caller of an entry now (the innermost open call) last
  // entered in this thread's stream, if it entered any.
  std::optional<uint64_t> repeatedCallee() const {
    auto it = last_callee_.find(callerTraceId());
    if (it == last_callee_.end()) return std::nullopt;
    return it->second;
  }

  // Frames still open when the stream ends (exit() from deep inside, a thread cut short).
  void closeAll() {
    while (!stack_.empty()) exit(last_ns_);
  }

 private:
  std::unordered_map<uint32_t, Timing>& timings_;
  uint64_t* total_;
  uint64_t tid_;
  std::vector<TracedCall>* calls_;  // null unless the calls are kept
  const CallSizes* sizes_;
  std::vector<SizedCall>* sized_;
  std::vector<TimedFrame> stack_;
  std::unordered_map<uint32_t, uint32_t> active_;
  std::unordered_map<uint64_t, uint64_t> last_callee_;  // by caller trace id (0: none open)
  uint64_t last_ns_ = 0;
  std::unordered_map<uint32_t, uint64_t>* count_calls_ = nullptr;
  std::map<std::pair<uint32_t, uint32_t>, uint64_t>* count_edges_ = nullptr;
  uint64_t uncounted_ = 0;
  size_t max_depth_ = 0;

  uint64_t callerTraceId() const { return stack_.empty() ? 0 : stack_.back().trace_id; }
};

// One TRACE_EVENTS_SHORT event (docs/format.md, "Short trace events"): false when the bytes are
// damaged or end.
bool NextShortEvent(ByteCursor& in, const ThreadReplay& replay, uint64_t* delta, bool* is_exit,
                    uint64_t* trace_id, uint64_t* call_site) {
  uint64_t first;
  const uint8_t* byte;
  if (!in.bytes(1, &byte)) return false;
  first = *byte;
  // 0 exit, 1 the caller's last callee entered, 2 an entry with its id, 3 with its call site too
  uint64_t kind;
  if (first < format::kShortLong) {
    kind = first / format::kShortRepeatEntry;
    *delta = first & format::kShortMaxTicks;
  } else {
    kind = first - format::kShortLong;
    if (kind > 3 || !in.varint(delta)) return false;
  }
  *is_exit = kind == 0;
  *call_site = 0;
  if (kind == 2) return in.varint(trace_id);
  if (kind == 3) return in.varint(trace_id) && in.varint(call_site) && *call_site != 0;
  if (kind == 1) {
    std::optional<uint64_t> last = replay.repeatedCallee();
    if (!last) return false;
    *trace_id = *last;
  }
  return true;
}

// The rows of the traced functions. A function whose hooks pass the address of another object's
// copy (libstdc++'s, which the GOT gives) is traced under that copy's row and seen inlined under
// the program's DWARF row: one function under two rows, which callers found in an inline chain
// name by the traced one, as timed mode's shadow stack does.
class TracedRows {
 public:
  void add(FunctionId id, const Profile& p) {
    if (!rows_.insert(id.index()).second) return;
    const std::string& name = p.functions[id.index()].name;
    if (!name.empty()) by_name_.emplace(name, id);
  }

  // The caller in an inline chain (outermost first) at `j`: the innermost frame there that is
  // traced, or else the out-of-line function (frame 0). An inlined function without hooks of its
  // own is not a caller, as in timed mode, whose stack holds only traced functions.
  FunctionId callerIn(const std::vector<FunctionId>& chain, size_t j, const Profile& p) const {
    for (; j > 0; --j)
      if (std::optional<FunctionId> row = traced(chain[j], p)) return *row;
    return traced(chain[0], p).value_or(chain[0]);
  }

 private:
  std::unordered_set<uint32_t> rows_;
  std::unordered_map<std::string, FunctionId> by_name_;

  std::optional<FunctionId> traced(FunctionId id, const Profile& p) const {
    if (rows_.contains(id.index())) return id;
    auto it = by_name_.find(p.functions[id.index()].name);
    if (it != by_name_.end()) return it->second;
    return std::nullopt;
  }
};

// The caller of a CALL_SITE_COUNTS entry of `callee` (docs/format.md, "Call-site counts"): the
// function the callee's code was inlined into, when the entry hook ran in an inlined copy, or
// else the innermost frame at the call site.
std::optional<FunctionId> CallerOf(const format::RawCallSite& site, FunctionId callee,
                                   uint64_t time, const FramesBefore& frames_before,
                                   const TracedRows& traced, const Profile& p) {
  std::vector<FunctionId> inside = frames_before(site.hook_return, time);
  // One function by name: the hook's address of a template instance may be another object's
  // copy of it (the program's and libstdc++'s), found through the GOT.
  const std::string& name = p.functions[callee.index()].name;
  auto same = [&](FunctionId a) {
    return a == callee || (!name.empty() && p.functions[a.index()].name == name);
  };
  bool in_callee = false;
  for (size_t k = inside.size(); k-- > 0 && !in_callee;) {
    if (!same(inside[k])) continue;
    if (k > 0) return traced.callerIn(inside, k - 1, p);
    in_callee = true;
  }
  // The hook ran in code that is not the callee's: an inlined copy whose hook GCC placed outside
  // the copy's inline range (at -O2). The code the hook is in is what called it; the call site
  // passed to the hook is the enclosing out-of-line function's, one level or more too high.
  if (!in_callee && !inside.empty()) return traced.callerIn(inside, inside.size() - 1, p);
  if (site.call_site == 0) return std::nullopt;
  std::vector<FunctionId> at = frames_before(site.call_site, time);
  if (at.empty()) return std::nullopt;
  return traced.callerIn(at, at.size() - 1, p);
}

// The timed streams: exact times, and the calls of threads without CALL_COUNTS (`counted`).
template <typename TraceFunction, typename UntracedCaller>
void ReplayEvents(const format::RawProfile& raw, const TraceFunction& fn,
                  const UntracedCaller& untraced_caller,
                  const std::map<uint64_t, const format::RawCallCounts*>& counted, Profile& p,
                  std::optional<uint64_t> only_thread, bool keep_calls,
                  std::unordered_map<uint32_t, uint64_t>& calls,
                  std::map<std::pair<uint32_t, uint32_t>, uint64_t>& edge_calls) {
  uint64_t q32 = raw.process->trace_tick_ns_q32;
  uint64_t inherited_frames = 0;
  for (const auto& [key, value] : raw.stats)
    if (key == "trace_inherited_frames") inherited_frames = value;
  auto to_ns = [q32](uint64_t tick) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(tick) * q32) >> 32);
  };
  std::unordered_map<uint32_t, Timing> timings;
  CallSizes sizes;
  for (const format::SizeRecord& r : raw.sizes)
    if (r.function != 0) sizes[{r.tid, r.entry_tick}] = {r.function, r.n};
  std::map<uint64_t, ThreadReplay> replays;
  uint64_t total = 0;
  for (const format::RawTraceEvents& run : raw.trace_events) {
    if (only_thread && run.tid != *only_thread) continue;
    auto [at, made] = replays.try_emplace(run.tid, timings, &total, run.tid,
                                          keep_calls ? &p.calls : nullptr, &sizes, &p.sized_calls);
    ThreadReplay& replay = at->second;
    if (made && !counted.contains(run.tid)) {
      // A forked child's stream begins by re-entering the frames it inherited.
      uint64_t inherited = run.tid == raw.process->pid ? inherited_frames : 0;
      replay.countCalls(&calls, &edge_calls, inherited);
    }
    ByteCursor in(reinterpret_cast<const uint8_t*>(run.packed.data()), run.packed.size());
    uint64_t tick = run.base_tick;
    for (uint64_t i = 0; i < run.events; ++i) {
      uint64_t delta, trace_id = 0, call_site = 0;
      bool is_exit;
      if (run.short_code) {
        if (!NextShortEvent(in, replay, &delta, &is_exit, &trace_id, &call_site)) break;
      } else {
        uint64_t code;
        if (!in.varint(&code) || !in.varint(&delta)) break;
        is_exit = code & 1;
        trace_id = code >> 1;
      }
      tick += delta;
      if (is_exit) {
        replay.exit(to_ns(tick));
      } else {
        std::optional<FunctionId> from;
        if (call_site != 0) from = untraced_caller(call_site, trace_id);
        replay.enter(fn(trace_id).value_or(FunctionId()), to_ns(tick), trace_id, tick, from);
      }
    }
  }
  for (auto& [tid, replay] : replays) {
    replay.closeAll();
    p.summary.max_call_depth =
        std::max<uint32_t>(p.summary.max_call_depth, uint32_t(replay.maxDepth()));
  }
  // Calls were kept as they ended (innermost first): by thread, then entry, outer before inner.
  std::stable_sort(p.calls.begin(), p.calls.end(), [](const TracedCall& a, const TracedCall& b) {
    if (a.tid != b.tid) return a.tid < b.tid;
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    return a.depth < b.depth;
  });
  for (const auto& [index, t] : timings) {
    Function& f = p.functions[index];
    f.timed = true;
    f.traced_inclusive_ns = t.inclusive;
    f.traced_self_ns = t.self;
    f.traced_min_ns = t.min == UINT64_MAX ? 0 : t.min;
    f.traced_max_ns = t.max;
    f.traced_call_sum_ns = t.sum;
  }
  p.summary.trace_timed = !timings.empty();
  p.summary.traced_total_ns = total;
}

}  // namespace

void ApplyTrace(const format::RawProfile& raw, const FunctionAt& function_at,
                const FramesBefore& frames_before, Profile& p, std::optional<uint64_t> only_thread,
                bool keep_calls) {
  if (raw.call_counts.empty() && raw.call_site_counts.empty() && raw.trace_events.empty()) return;
  std::unordered_map<uint64_t, FunctionId> by_trace_id;
  // When the id was given: names come from the images mapped then (a library dlclosed and
  // another loaded there: each id is one function, docs/format.md).
  auto seen_time = [&](uint64_t trace_id) -> uint64_t {
    auto seen = raw.trace_function_seen.find(trace_id);
    return seen != raw.trace_function_seen.end() ? seen->second
           : raw.process                         ? raw.process->time
                                                 : 0;
  };
  auto fn = [&](uint64_t trace_id) -> std::optional<FunctionId> {
    if (trace_id == 0) return std::nullopt;
    auto cached = by_trace_id.find(trace_id);
    if (cached != by_trace_id.end()) return cached->second;
    auto address = raw.trace_functions.find(trace_id);
    if (address == raw.trace_functions.end()) return std::nullopt;
    FunctionId id = function_at(address->second, seen_time(trace_id));
    if (!id.valid()) return std::nullopt;
    by_trace_id.emplace(trace_id, id);
    return id;
  };

  // CALL_COUNTS are cumulative per thread: the last record of a thread is its count.
  std::map<uint64_t, const format::RawCallCounts*> last_of_thread;
  for (const format::RawCallCounts& c : raw.call_counts)
    if (!only_thread || c.tid == *only_thread) last_of_thread[c.tid] = &c;
  std::unordered_map<uint32_t, uint64_t> calls;                  // by function
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> edge_calls;  // by (caller, callee)
  for (const auto& [tid, counts] : last_of_thread) {
    p.summary.max_call_depth =
        std::max<uint32_t>(p.summary.max_call_depth, uint32_t(counts->max_depth));
    for (const format::RawCallEdge& e : counts->edges) {
      std::optional<FunctionId> callee = fn(e.callee);
      if (!callee) continue;
      calls[callee->index()] += e.calls;
      if (std::optional<FunctionId> caller = fn(e.caller))
        edge_calls[{caller->index(), callee->index()}] += e.calls;
    }
  }
  // CALL_SITE_COUNTS add up, by thread: one when the thread ends, and one before each unload
  // of a module they name (docs/format.md). Their callers come from the symbolizer, with the
  // images mapped at the record's time.
  TracedRows traced;
  for (const auto& [trace_id, address] : raw.trace_functions)
    if (std::optional<FunctionId> id = fn(trace_id)) traced.add(*id, p);
  for (const format::RawCallSiteCounts& c : raw.call_site_counts) {
    if (only_thread && c.tid != *only_thread) continue;
    for (const format::RawCallSite& site : c.sites) {
      auto address = raw.trace_functions.find(site.callee);
      if (address == raw.trace_functions.end()) continue;
      FunctionId id = function_at(address->second, c.time);
      if (!id.valid()) continue;
      std::optional<FunctionId> callee = id;
      calls[callee->index()] += site.calls;
      std::optional<FunctionId> caller = CallerOf(site, *callee, c.time, frames_before, traced, p);
      if (caller && caller->valid()) edge_calls[{caller->index(), callee->index()}] += site.calls;
    }
  }

  // Timed mode: exact times per call from the event streams, thread by thread in file order;
  // and the calls of a thread that has no CALL_COUNTS (the runtime's timed mode counts none).
  if (!raw.trace_events.empty() && raw.process && raw.process->trace_tick_ns_q32 != 0) {
    // A call from untraced code: the innermost frame at its call site called it (as in counts
    // mode), unless that is the innermost open call after all (code of its own outside its
    // unwind entry, a .cold part).
    std::map<uint64_t, FunctionId> at_site;
    auto untraced_caller = [&](uint64_t call_site, uint64_t trace_id) {
      auto [it, made] = at_site.try_emplace(call_site);
      if (made) {
        std::vector<FunctionId> at = frames_before(call_site, seen_time(trace_id));
        if (!at.empty()) it->second = traced.callerIn(at, at.size() - 1, p);
      }
      return it->second;
    };
    ReplayEvents(raw, fn, untraced_caller, last_of_thread, p, only_thread, keep_calls, calls,
                 edge_calls);
  }
  for (const auto& [key, value] : raw.stats)
    if (key == "trace_events_dropped" && value > 0 && !raw.trace_events.empty())
      p.warnings.push_back("timed tracing ran out of event buffers (" + std::to_string(value) +
                           " times): a thread's calls and times after that are missing");
  if (p.functions.size() > p.callees.size()) p.callees.resize(p.functions.size());
  for (const auto& [index, n] : calls) {
    Function& f = p.functions[index];
    f.calls = n;
    f.calls_exact = true;
  }
  for (const auto& [edge, n] : edge_calls) {
    auto& edges = p.callees[edge.first];
    uint32_t child = edge.second;  // a lambda may not capture a structured binding in clang 14
    auto it = std::find_if(edges.begin(), edges.end(),
                           [&](const CallEdge& e) { return e.child.index() == child; });
    if (it != edges.end()) {
      it->calls = n;
    } else {
      edges.push_back(CallEdge{FunctionId(edge.second), 0, 0, n});
    }
  }
  p.summary.traced = !calls.empty();
}

}  // namespace hotline::model

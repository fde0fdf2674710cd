#include "format/raw_profile.h"

#include <algorithm>

namespace hotline::format {

std::string RawProfile::str(uint64_t id) {
  if (id == 0) return {};
  auto it = strings.find(id);
  if (it == strings.end()) {
    ++dangling_references;
    return "[unknown]";
  }
  return it->second;
}

std::vector<uint64_t> RawProfile::stack(uint64_t node, bool* broken) const {
  std::vector<uint64_t> frames;
  // A well-formed trie has parents defined before children, so a chain can never be longer
  // than the node count; the bound also stops cycles in a forged file.
  size_t limit = stack_nodes.size() + 1;
  while (node != 0 && limit-- > 0) {
    auto it = stack_nodes.find(node);
    if (it == stack_nodes.end()) {
      if (broken) *broken = true;
      break;
    }
    frames.push_back(it->second.address);
    node = it->second.parent;
  }
  if (node != 0 && broken) *broken = true;
  return frames;
}

const RawModule* RawProfile::moduleAt(uint64_t address, uint64_t time) const {
  const RawModule* found = nullptr;
  for (const RawModule& m : modules) {
    if (address < m.start || address - m.start >= m.size) continue;
    if (m.load_time > time && found) continue;  // loaded later than the sample: a reuse
    if (m.unload_time != 0 && m.unload_time < time) continue;
    found = &m;
  }
  return found;
}

RawThread* RawProfile::thread(uint64_t tid) {
  for (auto it = threads.rbegin(); it != threads.rend(); ++it)
    if (it->tid == tid) return &*it;
  return nullptr;
}

std::unordered_map<uint64_t, uint64_t> RawProfile::samplesPerThread() const {
  std::unordered_map<uint64_t, uint64_t> counts;
  for (const SampleRecord& s : samples) counts[s.tid] += s.weight;
  return counts;
}

void RawProfile::onProcess(const ProcessRecord& r) {
  RawProcess p;
  p.pid = r.pid;
  p.ppid = r.ppid;
  p.realtime_ns = r.realtime_ns;
  p.time = r.time;
  p.exe = str(r.exe);
  for (uint64_t i = 0; i < r.argc; ++i) p.argv.push_back(str(r.argv[i]));
  p.clock = r.clock;
  p.sampler = r.sampler;
  p.period_ns = r.period_ns;
  p.unwinder = r.unwinder;
  p.max_depth = r.max_depth;
  p.flags = r.flags;
  p.trace = r.trace;
  p.trace_tick_ns_q32 = r.trace_tick_ns_q32;
  process = std::move(p);
}

void RawProfile::onString(const StringRecord& r) { strings[r.id] = std::string(r.text, r.size); }

void RawProfile::onModuleLoad(const ModuleLoadRecord& r) {
  RawModule m;
  m.id = r.id;
  m.load_time = r.time;
  m.path = str(r.path);
  m.bias = r.bias;
  m.start = r.start;
  m.size = r.size;
  m.file_offset = r.file_offset;
  m.build_id.assign(reinterpret_cast<const char*>(r.build_id), r.build_id_size);
  modules.push_back(std::move(m));
}

void RawProfile::onModuleUnload(const ModuleUnloadRecord& r) {
  for (RawModule& m : modules)
    if (m.id == r.id) m.unload_time = r.time;
}

// A thread can be recorded twice, by the runtime and by the kernel sampler: a start within the
// lifetime of a thread already known is that thread, and its first known end and CPU time stay.
void RawProfile::onThreadStart(const ThreadStartRecord& r) {
  if (RawThread* t = thread(r.tid); t && (t->end_time == 0 || r.time <= t->end_time)) {
    t->start_time = std::min(t->start_time, r.time);
    if (t->name.empty()) t->name = str(r.name);
    t->flags |= r.flags;
    return;
  }
  RawThread t;
  t.tid = r.tid;
  t.start_time = r.time;
  t.name = str(r.name);
  t.flags = r.flags;
  threads.push_back(std::move(t));
}

void RawProfile::onThreadEnd(const ThreadEndRecord& r) {
  RawThread* t = thread(r.tid);
  if (!t) {
    threads.push_back(RawThread{r.tid, 0, 0, {}, 0, {}});
    t = &threads.back();
  }
  if (!t->end_time) t->end_time = r.time;
  if (r.cpu_ns != kCpuUnknown && !t->cpu_ns) t->cpu_ns = r.cpu_ns;
}

void RawProfile::onThreadName(const ThreadNameRecord& r) {
  if (RawThread* t = thread(r.tid)) t->name = str(r.name);
}

void RawProfile::onStackNode(const StackNodeRecord& r) {
  stack_nodes[r.id] = RawStackNode{r.parent, r.address};
}

void RawProfile::onSample(const SampleRecord& r) { samples.push_back(r); }

void RawProfile::onMark(const MarkRecord& r) {
  marks.push_back(RawMark{r.time, r.tid, str(r.label)});
}

void RawProfile::onState(const StateRecord& r) { states.push_back(r); }

void RawProfile::onStats(const StatsRecord& r) { stats.emplace_back(str(r.key), r.value); }

void RawProfile::onDisabled(const DisabledRecord& r) { disabled_reasons.push_back(str(r.reason)); }

void RawProfile::onEnd(const EndRecord& r) { end = r; }

void RawProfile::onTraceFunction(const TraceFunctionRecord& r) {
  trace_functions[r.id] = r.address;
  if (r.seen) trace_function_seen[r.id] = r.seen;
}

void RawProfile::onCallCounts(const CallCountsRecord& r) {
  RawCallCounts counts{r.time, r.tid, r.max_depth, {}};
  counts.edges.reserve(r.count);
  for (uint64_t i = 0; i < r.count; ++i)
    counts.edges.push_back(
        RawCallEdge{r.triples[3 * i], r.triples[3 * i + 1], r.triples[3 * i + 2]});
  call_counts.push_back(std::move(counts));
}

void RawProfile::onCallSiteCounts(const CallSiteCountsRecord& r) {
  RawCallSiteCounts counts{r.time, r.tid, {}};
  counts.sites.reserve(r.count);
  for (uint64_t i = 0; i < r.count; ++i) {
    const uint64_t* q = r.quads + 4 * i;
    counts.sites.push_back(RawCallSite{q[0], q[1], q[2], q[3]});
  }
  call_site_counts.push_back(std::move(counts));
}

void RawProfile::onTraceEvents(const TraceEventsRecord& r) {
  trace_events.push_back(RawTraceEvents{
      r.tid, r.base_tick, r.events,
      std::string(reinterpret_cast<const char*>(r.packed), r.packed_size), r.short_code});
}

void RawProfile::onAlloc(const AllocRecord& r) {
  if (heap_events_) allocs.push_back(r);
}

void RawProfile::onFree(const FreeRecord& r) {
  if (heap_events_) frees.push_back(r);
}

void RawProfile::onLineCounts(const LineCountsRecord& r) {
  RawLineCounts counts{std::string(r.file), std::string(r.module), {}};
  counts.lines.reserve(r.count);
  for (uint64_t i = 0; i < r.count; ++i)
    counts.lines.emplace_back(r.pairs[2 * i], r.pairs[2 * i + 1]);
  line_counts.push_back(std::move(counts));
}

void RawProfile::onFunctionCount(const FunctionCountRecord& r) {
  function_counts.push_back(RawFunctionCount{std::string(r.file), std::string(r.name), r.start_line,
                                             r.end_line, r.executions});
}

void RawProfile::onLineInstructions(const LineInstructionsRecord& r) {
  RawLineInstructions file{std::string(r.file), std::string(r.module), std::string(r.function), {}};
  file.lines.reserve(r.count);
  for (uint64_t i = 0; i < r.count; ++i) {
    const uint64_t* row = r.rows + 4 * i;
    file.lines.push_back({row[0], row[1], row[2], row[3] != 0});
  }
  line_instructions.push_back(std::move(file));
}

void RawProfile::onFunctionInstructions(const FunctionInstructionsRecord& r) {
  function_instructions.push_back(RawFunctionInstructions{std::string(r.file), std::string(r.name),
                                                          std::string(r.module), r.executed,
                                                          r.uncounted, r.unbounded});
}

void RawProfile::onNote(const NoteRecord& r) { notes.emplace_back(r.text); }

void RawProfile::onFrame(const FrameRecord& r) {
  frames[r.id] =
      RawFrame{std::string(r.name), std::string(r.file),   r.line, std::string(r.def_file),
               r.def_line,          std::string(r.module), r.flags};
}

void RawProfile::onSource(const SourceRecord& r) {
  sources[std::string(r.file)] = std::string(r.text);
}

void RawProfile::onWatch(const WatchRecord& r) {
  RawWatch w;
  w.time = r.time;
  w.id = r.id;
  w.name = std::string(r.name);
  w.address = r.address;
  w.size = r.size;
  w.type = r.type;
  w.flags = r.flags;
  for (uint64_t i = 0; i < r.enumerator_count; ++i)
    w.enumerators.emplace_back(r.enumerators[i].value, std::string(r.enumerators[i].name));
  watches.push_back(std::move(w));
}

void RawProfile::onWatchHits(const WatchHitsRecord& r) {
  RawWatchHits h;
  h.time = r.time;
  h.tid = r.tid;
  h.hits.assign(r.hits, r.hits + r.hit_count);
  h.totals.assign(r.totals, r.totals + r.total_count);
  watch_hits.push_back(std::move(h));
}

void RawProfile::onSize(const SizeRecord& r) { sizes.push_back(r); }

void RawProfile::onTexCommands(const TexCommandsRecord& r) {
  tex_commands.clear();
  for (uint64_t i = 0; i < r.count; ++i)
    tex_commands.push_back(RawTexCommand{r.rows[3 * i], std::string(r.names[i]), r.rows[3 * i + 1],
                                         r.rows[3 * i + 2]});
}

Expected<RawProfile> LoadRawProfile(const std::string& path, ReadStats* stats, bool heap_events) {
  RawProfile profile(heap_events);
  Status status = ReadProfileFile(path, profile, stats);
  if (!status.ok()) return status;
  return profile;
}

}  // namespace hotline::format

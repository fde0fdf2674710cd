// Every record of a profile, kept in memory as read: the input of `hotline dump`, of the model
// and of tests. Ids are resolved lazily through the tables below; a dangling id (its defining
// record was in a damaged chunk) resolves to nothing and is counted by the caller.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "format/reader.h"

namespace hotline::format {

struct RawModule {
  uint64_t id = 0;
  uint64_t load_time = 0, unload_time = 0;  // unload_time 0 = never unloaded
  std::string path;
  uint64_t bias = 0, start = 0, size = 0, file_offset = 0;
  std::string build_id;  // raw bytes
};

struct RawThread {
  uint64_t tid = 0;
  uint64_t start_time = 0, end_time = 0;
  std::string name;
  uint64_t flags = 0;
  std::optional<uint64_t> cpu_ns;  // known when the thread's end was recorded
};

struct RawProcess {
  uint64_t pid = 0, ppid = 0, realtime_ns = 0, time = 0;
  std::string exe;
  std::vector<std::string> argv;
  ClockMode clock = ClockMode::kCpu;
  Sampler sampler = Sampler::kNone;
  uint64_t period_ns = 0;
  Unwinder unwinder = Unwinder::kDwarf;
  uint64_t max_depth = 0;
  uint64_t flags = 0;
  TraceMode trace = TraceMode::kNone;
  uint64_t trace_tick_ns_q32 = 0;
};

struct RawStackNode {
  uint64_t parent = 0, address = 0;
};

struct RawMark {
  uint64_t time = 0, tid = 0;
  std::string label;
};

struct RawCallEdge {
  uint64_t caller = 0, callee = 0, calls = 0;  // trace function ids; caller 0 = untraced code
};

struct RawCallCounts {
  uint64_t time = 0, tid = 0, max_depth = 0;
  std::vector<RawCallEdge> edges;
};

// One entry of CALL_SITE_COUNTS: the caller is found from the two return addresses.
struct RawCallSite {
  uint64_t call_site = 0, hook_return = 0, callee = 0, calls = 0;
};

struct RawCallSiteCounts {
  uint64_t time = 0, tid = 0;
  std::vector<RawCallSite> sites;
};

struct RawTraceEvents {
  uint64_t tid = 0, base_tick = 0, events = 0;
  std::string packed;  // see TraceEventsRecord
  bool short_code = false;
};

struct RawLineCounts {
  std::string file, module;
  std::vector<std::pair<uint64_t, uint64_t>> lines;  // (line, executions), ascending
};

struct RawFunctionCount {
  std::string file, name;
  uint64_t start_line = 0, end_line = 0, executions = 0;
};

struct RawLineInstructions {
  std::string file, module, function;
  struct Row {
    uint64_t line = 0, executed = 0, uncounted = 0;
    bool unbounded = false;
  };
  std::vector<Row> lines;  // ascending
};

struct RawFunctionInstructions {
  std::string file, name, module;
  uint64_t executed = 0, uncounted = 0;
  bool unbounded = false;
};

struct RawFrame {
  std::string name, file;
  uint64_t line = 0;
  std::string def_file;
  uint64_t def_line = 0;
  std::string module;
  uint64_t flags = 0;
};

struct RawWatch {
  uint64_t time = 0, id = 0;
  std::string name;
  uint64_t address = 0, size = 0;
  WatchType type = WatchType::kSigned;
  uint64_t flags = 0;
  std::vector<std::pair<int64_t, std::string>> enumerators;  // (value, name)
};

struct RawWatchHits {
  uint64_t time = 0, tid = 0;
  std::vector<WatchHit> hits;
  std::vector<WatchTotal> totals;
};

// One row of a TeX front-end's command summary (TEX_COMMANDS).
struct RawTexCommand {
  uint64_t code = 0;
  std::string name;
  uint64_t slots = 0, cost = 0;
};

// Records in file order, strings resolved at the time they were read.
class RawProfile : public RecordVisitor {
 public:
  // With `heap_events` false, ALLOC and FREE records are passed over (allocs and frees stay
  // empty): model::LoadHeapProfile builds the heap while it reads them, without keeping them.
  explicit RawProfile(bool heap_events = true) : heap_events_(heap_events) {}

  std::optional<RawProcess> process;
  std::vector<RawModule> modules;  // in load order
  std::vector<RawThread> threads;  // in start order
  std::unordered_map<uint64_t, RawStackNode> stack_nodes;
  std::vector<SampleRecord> samples;
  std::vector<RawMark> marks;
  std::vector<StateRecord> states;
  std::vector<std::string> notes;
  std::vector<std::pair<std::string, uint64_t>> stats;  // key, value, in order
  std::vector<std::string> disabled_reasons;
  std::optional<EndRecord> end;
  std::unordered_map<uint64_t, uint64_t> trace_functions;      // id → entry address
  std::unordered_map<uint64_t, uint64_t> trace_function_seen;  // id → when given, if said
  std::vector<RawCallCounts> call_counts;
  std::vector<RawCallSiteCounts> call_site_counts;
  std::vector<RawTraceEvents> trace_events;
  std::vector<AllocRecord> allocs;
  std::vector<FreeRecord> frees;
  std::vector<RawLineCounts> line_counts;
  std::vector<RawFunctionCount> function_counts;
  std::vector<RawLineInstructions> line_instructions;
  std::vector<RawFunctionInstructions> function_instructions;
  std::unordered_map<uint64_t, RawFrame> frames;  // named frames by id
  std::map<std::string, std::string> sources;     // texts of sources in no file, by name
  std::vector<RawWatch> watches;  // WATCH records in file order (an id again: its end)
  std::vector<RawWatchHits> watch_hits;
  std::vector<RawTexCommand> tex_commands;  // the last TEX_COMMANDS (running totals)
  std::unordered_map<uint64_t, std::string> strings;
  std::vector<SizeRecord> sizes;     // in file order
  uint64_t dangling_references = 0;  // ids used but never defined

  // The frames of `node`, innermost first. Sets *broken when a parent link dangles.
  std::vector<uint64_t> stack(uint64_t node, bool* broken = nullptr) const;
  // The module whose range holds `address` at `time`, or nullptr.
  const RawModule* moduleAt(uint64_t address, uint64_t time) const;
  RawThread* thread(uint64_t tid);
  // Sum of sample weights per thread id.
  std::unordered_map<uint64_t, uint64_t> samplesPerThread() const;

  void onProcess(const ProcessRecord& r) override;
  void onString(const StringRecord& r) override;
  void onModuleLoad(const ModuleLoadRecord& r) override;
  void onModuleUnload(const ModuleUnloadRecord& r) override;
  void onThreadStart(const ThreadStartRecord& r) override;
  void onThreadEnd(const ThreadEndRecord& r) override;
  void onThreadName(const ThreadNameRecord& r) override;
  void onStackNode(const StackNodeRecord& r) override;
  void onSample(const SampleRecord& r) override;
  void onMark(const MarkRecord& r) override;
  void onState(const StateRecord& r) override;
  void onStats(const StatsRecord& r) override;
  void onDisabled(const DisabledRecord& r) override;
  void onEnd(const EndRecord& r) override;
  void onTraceFunction(const TraceFunctionRecord& r) override;
  void onCallCounts(const CallCountsRecord& r) override;
  void onCallSiteCounts(const CallSiteCountsRecord& r) override;
  void onTraceEvents(const TraceEventsRecord& r) override;
  void onAlloc(const AllocRecord& r) override;
  void onFree(const FreeRecord& r) override;
  void onLineCounts(const LineCountsRecord& r) override;
  void onFunctionCount(const FunctionCountRecord& r) override;
  void onLineInstructions(const LineInstructionsRecord& r) override;
  void onFunctionInstructions(const FunctionInstructionsRecord& r) override;
  void onNote(const NoteRecord& r) override;
  void onFrame(const FrameRecord& r) override;
  void onSource(const SourceRecord& r) override;
  void onWatch(const WatchRecord& r) override;
  void onWatchHits(const WatchHitsRecord& r) override;
  void onSize(const SizeRecord& r) override;
  void onTexCommands(const TexCommandsRecord& r) override;

 private:
  std::string str(uint64_t id);
  bool heap_events_ = true;
};

// Reads a whole profile into memory; its ALLOC and FREE records only when `heap_events`.
Expected<RawProfile> LoadRawProfile(const std::string& path, ReadStats* stats,
                                    bool heap_events = true);

}  // namespace hotline::format

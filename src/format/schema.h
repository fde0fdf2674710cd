// The .hotline file format: the one header shared by writer (runtime) and reader (tool).
// docs/format.md is the specification; keep the two in step.
#pragma once

#include <cstdint>
#include <string_view>

namespace hotline::format {

inline constexpr uint8_t kMagic[8] = {0x89, 'H', 'T', 'L', 0x0D, 0x0A, 0x1A, 0x0A};
inline constexpr uint16_t kVersion = 1;
inline constexpr uint16_t kMinReaderVersion = 1;
inline constexpr uint32_t kFileHeaderSize = 32;
inline constexpr uint32_t kChunkHeaderSize = 24;
inline constexpr uint8_t kChunkSync[4] = {'H', 'L', 'C', 'K'};
inline constexpr uint32_t kMaxChunkBytes = 64u << 20;

enum Feature : uint64_t {
  kFeatureSamples = 1u << 0,
  kFeatureTrace = 1u << 1,       // -finstrument-functions tracing: CALL_(SITE_)COUNTS, TRACE_EVENTS
  kFeatureHeap = 1u << 2,        // ALLOC and FREE records
  kFeatureLineCounts = 1u << 3,  // LINE_COUNTS and FUNCTION_COUNT from gcov (and *_INSTRUCTIONS)
};

enum class ChunkType : uint16_t { kRecords = 1 };
enum ChunkFlags : uint16_t { kChunkZstd = 1u << 0 };

enum class RecordKind : uint32_t {
  kProcess = 1,
  kString = 2,
  kModuleLoad = 3,
  kModuleUnload = 4,
  kThreadStart = 5,
  kThreadEnd = 6,
  kThreadName = 7,
  kStackNode = 8,
  kSample = 9,
  kMark = 10,
  kState = 11,
  kStats = 12,
  kDisabled = 13,
  kEnd = 14,
  kTraceFunction = 15,
  kCallCounts = 16,
  kTraceEvents = 17,
  kAlloc = 18,
  kFree = 19,
  kLineCounts = 20,
  kFunctionCount = 21,
  kNote = 22,
  kFrame = 23,
  kSource = 24,
  kSize = 25,
  kWatch = 26,
  kWatchHits = 27,
  kTexCommands = 28,
  kTraceEventsShort = 29,
  kCallSiteCounts = 30,
  kStackNodes = 31,
  kSamples = 32,
  kFrames = 33,
  kLineInstructions = 34,
  kFunctionInstructions = 35,
};

// Bounds on values (docs/format.md, "Bounds", and beside each field). A value beyond its bound
// cannot be true of a recorded run: the reader reports the record as malformed and skips it, as
// a record whose bytes do not parse. They keep every sum and product the tools make of the
// values inside 64 bits, every narrowing to the model's 32-bit fields exact, and every
// allocation or loop a value sizes within the bytes that hold it.
//
// Source line numbers, and stack depths: the model keeps them in 32 bits.
inline constexpr uint64_t kMaxLine = 0xFFFF'FFFFu;
inline constexpr uint64_t kMaxDepth = 0xFFFF'FFFFu;
// Enumerations (clock, sampler, how a run ended, ...) are 32-bit: a larger value is no value a
// writer of any version gives (a newer writer's new values below it are kept as they are).
inline constexpr uint64_t kMaxEnum = 0xFFFF'FFFFu;
// Times (CLOCK_MONOTONIC ns: 146 years of uptime; Unix time in ns, up to the year 2116).
inline constexpr uint64_t kMaxTime = uint64_t{1} << 62;
// The time one sample stands for, weight × period (13 days), and all samples of a run (36
// years): more is not a run; so Σ sample time + Σ unsampled CPU time < 2^61.
inline constexpr uint64_t kMaxSampleNs = uint64_t{1} << 50;
inline constexpr uint64_t kMaxRunSampleNs = uint64_t{1} << 60;
// A thread's CPU time, and the threads' of a run together (36 years).
inline constexpr uint64_t kMaxRunCpuNs = uint64_t{1} << 60;
// The period of a run whose PROCESS record is missing (the model assumes the same).
inline constexpr uint64_t kAssumedPeriodNs = 1'000'000;
// Counts of events: executions of a line or function, calls of an edge, TeX command slots and
// cost, watch traps (2^56: a line run once per cycle of a 4 GHz core for 208 days).
inline constexpr uint64_t kMaxCount = uint64_t{1} << 56;
// Sizes in bytes (allocations, munmap lengths): no block is larger than an address space; and
// all allocations of a run together.
inline constexpr uint64_t kMaxBlockBytes = uint64_t{1} << 57;
inline constexpr uint64_t kMaxRunAllocBytes = uint64_t{1} << 62;
// Timed tracing's tick length, as nanoseconds per tick × 2^32: a tick of at most 1 µs.
inline constexpr uint64_t kMaxTickNsQ32 = uint64_t{1000} << 32;

enum class ClockMode : uint32_t { kCpu = 0, kWall = 1 };
enum class Sampler : uint32_t {
  kNone = 0,
  kPerfTaskClock = 1,
  kPosixCpuTimer = 2,
  kPosixMonotonicTimer = 3,
  kKernelRecorder = 4,  // perf task-clock read by `hotline record`, outside the program
};
// The first id of a stream appended after another in one file (the recorder's after the
// runtime's): ids of strings and stack nodes below it are the first stream's.
inline constexpr uint64_t kAppendedIdBase = uint64_t{1} << 40;
enum class Unwinder : uint32_t { kFramePointers = 0, kDwarf = 1 };
enum class EndHow : uint32_t {
  kExit = 0,
  kUnderscoreExit = 1,
  kSignal = 2,
  kExec = 3,
  kUnload = 4,
  kDetached = 5,  // `record -p` stopped sampling a process that runs on
  kEnded = 6,     // it ended; how (its exit status) was its parent's to see, not hotline's
};
enum class StateSource : uint32_t { kApi = 0, kSignal = 1, kStartup = 2 };

enum ProcessFlags : uint32_t {
  kStartedPaused = 1u << 0,
  kForkedChild = 1u << 1,
  kExecImage = 1u << 2
};
enum ThreadFlags : uint32_t {
  kThreadPreexisting = 1u << 0,
  // The runtime's own thread (its writer): only a sampler outside the program sees it, and its
  // time is the profiler's.
  kThreadRuntime = 1u << 1,
};
enum SampleFlags : uint32_t {
  kSampleTruncated = 1u << 0,
  kSampleBroken = 1u << 1,
  kSampleInRuntime = 1u << 2,
  // The stack is the tracer's shadow stack: the first frame is the interrupted instruction, the
  // others are entry addresses of the traced functions on the stack, innermost first.
  kSampleShadowStack = 1u << 3,
};

enum class TraceMode : uint32_t { kNone = 0, kCounts = 1, kTimed = 2 };
enum class AllocKind : uint32_t {
  kMalloc = 0,
  kCalloc = 1,
  kRealloc = 2,
  kAligned = 3,
  kNew = 4,
  kNewArray = 5,
  kMmap = 6,
};
enum class FreeKind : uint32_t {
  kFree = 0,
  kRealloc = 1,
  kDelete = 2,
  kDeleteArray = 3,
  kMunmap = 4,
};

// Record bodies, in field order. Strings are ids into the file's string table (0 = none).
// Times are absolute CLOCK_MONOTONIC nanoseconds here; the encoding makes them deltas.

struct ProcessRecord {
  uint64_t pid = 0, ppid = 0, realtime_ns = 0, time = 0;
  uint64_t exe = 0;
  uint64_t argc = 0;
  const uint64_t* argv = nullptr;  // argc string ids; valid only during the call
  ClockMode clock = ClockMode::kCpu;
  Sampler sampler = Sampler::kNone;
  uint64_t period_ns = 0;
  Unwinder unwinder = Unwinder::kDwarf;
  uint64_t max_depth = 0;
  uint64_t flags = 0;
  // Trailing fields (absent in older files: the defaults apply).
  TraceMode trace = TraceMode::kNone;
  uint64_t trace_tick_ns_q32 = 0;  // timed mode: nanoseconds per TRACE_EVENTS tick, × 2^32
};

struct StringRecord {
  uint64_t id = 0;
  const char* text = nullptr;  // not NUL-terminated; valid only during the call
  uint64_t size = 0;
};

struct ModuleLoadRecord {
  uint64_t time = 0, id = 0, path = 0, bias = 0, start = 0, size = 0, file_offset = 0;
  const uint8_t* build_id = nullptr;  // valid only during the call
  uint64_t build_id_size = 0;
};

struct ModuleUnloadRecord {
  uint64_t time = 0, id = 0;
};

struct ThreadStartRecord {
  uint64_t time = 0, tid = 0, name = 0, flags = 0;
};

// cpu_ns is kCpuUnknown when the thread was already gone and its CPU time could not be read.
inline constexpr uint64_t kCpuUnknown = ~uint64_t(0);
struct ThreadEndRecord {
  uint64_t time = 0, tid = 0, cpu_ns = 0;
};

struct ThreadNameRecord {
  uint64_t time = 0, tid = 0, name = 0;
};

struct StackNodeRecord {
  uint64_t id = 0, parent = 0, address = 0;
};

struct SampleRecord {
  uint64_t time = 0, tid = 0, node = 0, weight = 1, flags = 0;
};

// A run of new stack nodes with consecutive ids, as a front-end that interns its own stacks
// writes them (docs/format.md, STACK_NODES): node i has id first_id + i, parent parents[i] (0 or
// a smaller id) and address tag | addresses[i]. Readers deliver each as a StackNodeRecord.
struct StackNodesRecord {
  uint64_t first_id = 0, tag = 0, count = 0;
  const uint64_t* parents = nullptr;
  const uint64_t* addresses = nullptr;
};

// Samples of one thread taken at one time with the same flags (SAMPLES): count × (node, weight).
// Readers deliver each as a SampleRecord.
struct SamplesRecord {
  uint64_t time = 0, tid = 0, flags = 0, count = 0;
  const uint64_t* pairs = nullptr;  // count × (node, weight)
};

struct MarkRecord {
  uint64_t time = 0, tid = 0, label = 0;
};

struct StateRecord {
  uint64_t time = 0, tid = 0, on = 0;
  StateSource source = StateSource::kApi;
};

struct StatsRecord {
  uint64_t time = 0, key = 0, value = 0;
};

struct DisabledRecord {
  uint64_t time = 0, reason = 0;
};

// A traced function, by the address the compiler passed to __cyg_profile_func_enter.
struct TraceFunctionRecord {
  uint64_t id = 0, address = 0;
  // When the id was given (monotonic clock; optional, 0 = not said): the address names the
  // function of the image mapped there then. A front-end's named frames leave it out.
  uint64_t seen = 0;
};

// Exact calls per call-graph edge of one thread (caller 0 = called from untraced code), and
// the deepest its traced stack went. Written when the thread ends.
struct CallCountsRecord {
  uint64_t time = 0, tid = 0, max_depth = 0;
  uint64_t count = 0;
  const uint64_t* triples = nullptr;  // count × (caller id, callee id, calls)
};

// Counts mode: exact calls of one thread per place a traced function was entered from — the
// caller's return address (call_site) and the return address of the entry hook's own call
// (hook_return, which tells inlined copies apart) — with the callee's TRACE_FUNCTION id. The
// reader finds the caller with the symbolizer (docs/format.md, "Call-site counts").
struct CallSiteCountsRecord {
  uint64_t time = 0, tid = 0;
  uint64_t count = 0;
  const uint64_t* quads = nullptr;  // count × (call_site, hook_return, callee id, calls)
};

// Timed tracing: a run of entry/exit events of one thread. TRACE_EVENTS (`short_code` false):
// each event is varint(function id << 1 | is_exit) then varint(ticks since the previous event),
// the first since `base_tick`. TRACE_EVENTS_SHORT (`short_code` true): the byte code of
// docs/format.md, "Short trace events" (the constants below).
struct TraceEventsRecord {
  uint64_t tid = 0, base_tick = 0, events = 0;
  const uint8_t* packed = nullptr;
  uint64_t packed_size = 0;
  bool short_code = false;
};
// First bytes of TRACE_EVENTS_SHORT events: below kShortRepeatEntry an exit, below kShortLong a
// repeated entry, both with their ticks in the low six bits; kShortLong + 0, 1, 2, 3: an exit, a
// repeated entry, an entry with its function id, an entry with its function id and the call site
// of a call from untraced code, varints following.
inline constexpr uint8_t kShortRepeatEntry = 0x40;
inline constexpr uint8_t kShortLong = 0x80;
inline constexpr uint64_t kShortMaxTicks = 0x3F;

struct AllocRecord {
  uint64_t time = 0, tid = 0, address = 0, size = 0, node = 0;
  AllocKind kind = AllocKind::kMalloc;
  // Sampled heap mode: the allocation was sampled at one per this many bytes on average and
  // stands for size / (1 - exp(-size / sample_bytes)) bytes. 0: recorded because every
  // allocation is (exact mode). Written only when non-zero.
  uint64_t sample_bytes = 0;
};

struct FreeRecord {
  uint64_t time = 0, tid = 0, address = 0;
  FreeKind kind = FreeKind::kFree;
  uint64_t size = 0;  // munmap only
};

// Exact execution counts of one source file's lines, from gcov. Lines are delta-encoded.
// Its texts are inline, not string ids: `hotline record` appends these after the run, with a
// writer of its own that does not share the runtime's string table.
struct LineCountsRecord {
  std::string_view file, module;  // module: the binary these counts came from
  uint64_t count = 0;
  const uint64_t* pairs = nullptr;  // count × (line, executions), lines ascending
};

struct FunctionCountRecord {
  std::string_view file, name;
  uint64_t start_line = 0, end_line = 0, executions = 0;
};

// Instructions executed (callgrind's Ir), counted from a --coverage build's block counters
// (docs/coverage.md). `uncounted`: the most instructions of blocks whose count the counters do
// not determine could add; `unbounded`: one of them is a loop with no counter, which could add
// any number.
struct LineInstructionsRecord {
  std::string_view file, module, function;  // the lines of `file` in `function`'s machine code
  uint64_t count = 0;
  const uint64_t* rows =
      nullptr;  // count × (line, executed, uncounted, unbounded), lines ascending
};

struct FunctionInstructionsRecord {
  std::string_view file, name, module;
  uint64_t executed = 0, uncounted = 0;
  bool unbounded = false;
};

// Something a reader of the profile should know about how it was recorded (which sampler ran
// and why). Its text is inline: `hotline record` writes it with a writer of its own.
struct NoteRecord {
  uint64_t time = 0;
  std::string_view text;
};

// A named frame, written by a front-end for an interpreter (Devel::Hotline for perl), whose
// frames are names, not code addresses: a function (a Perl sub, a pseudo-function such as
// `CORE:match`) at one line. Written once, before the first stack node that uses it; a stack
// node's address kNamedFrameTag | id stands for it. The model builds these frames without a
// symbolizer. Texts are inline.
inline constexpr uint64_t kNamedFrameTag = uint64_t{1} << 62;
// Bit 62 set and bit 63 clear: kernel addresses (0xffff...) have both set.
inline constexpr bool IsNamedFrame(uint64_t address) { return (address >> 62) == 1; }
inline constexpr uint64_t NamedFrameId(uint64_t address) { return address & ~kNamedFrameTag; }
enum FrameFlags : uint64_t {
  kFramePseudo = 1u << 0,  // an operation timed as a function of its own (NYTProf's CORE: subs)
};
struct FrameRecord {
  uint64_t id = 0;            // ≥ 1
  std::string_view name;      // "Pkg::sub", "__ANON__[x.pl:12]", "(eval 3)[x.pl:5]", "main"
  std::string_view file;      // where the frame is: the file of its line
  uint64_t line = 0;          // the statement's line, 0 when none
  std::string_view def_file;  // the function's definition, empty when unknown
  uint64_t def_line = 0;
  std::string_view module;  // what the function belongs to, as a module: "perl", a .pm's path
  uint64_t flags = 0;       // FrameFlags
};

// Named frames written together (FRAMES): the texts they use, each once, and the frames, whose
// texts are indices into them. Readers deliver each frame as a FrameRecord.
struct FramesEntry {
  uint64_t id = 0;              // ≥ 1
  uint64_t name = 0, file = 0;  // indices into FramesRecord::strings
  uint64_t line = 0;
  uint64_t def_file = 0;  // an index, as name
  uint64_t def_line = 0;
  uint64_t module = 0;  // an index, as name
  uint64_t flags = 0;   // FrameFlags
};
struct FramesRecord {
  uint64_t string_count = 0;
  const std::string_view* strings = nullptr;
  uint64_t count = 0;
  const FramesEntry* frames = nullptr;
};

// The text of a source that exists in no file (`perl -e`, a string eval), under the name the
// frames give it, so that annotate shows it.
struct SourceRecord {
  std::string_view file, text;
};

// A watched object (docs/format.md, "Watched variables"): how to read the values of its hits.
enum class WatchType : uint32_t {
  kSigned = 0,
  kUnsigned = 1,
  kFloat = 2,  // IEEE 754: float when size is 4, double when 8
  kPointer = 3,
  kEnum = 4,
  kBool = 5,
};
inline constexpr uint32_t kMaxWatchType = 5;
enum WatchFlags : uint64_t {
  kWatchFromApi = 1u << 0,  // hotline_watch(), not --watch
  kWatchReads = 1u << 1,    // a read-or-write watchpoint counts reads too
  kWatchEnded = 1u << 2,    // the object is no longer watched
};
struct WatchEnumerator {
  int64_t value = 0;
  std::string_view name;
};
struct WatchRecord {
  uint64_t time = 0, id = 0;
  std::string_view name;
  uint64_t address = 0, size = 0;
  WatchType type = WatchType::kSigned;
  uint64_t flags = 0;  // WatchFlags
  uint64_t enumerator_count = 0;
  const WatchEnumerator* enumerators = nullptr;  // valid only during the call
};

// One hit: a trap after an instruction wrote a watched object.
struct WatchHit {
  uint64_t watch = 0, time = 0, value = 0, ip = 0;
};
// The kernel's counts for one watch on one thread, when its watchpoints close.
struct WatchTotal {
  uint64_t watch = 0, writes = 0, reads = 0;
};
struct WatchHitsRecord {
  uint64_t time = 0, tid = 0;
  uint64_t hit_count = 0;
  const WatchHit* hits = nullptr;  // times are absolute; valid only during the call
  uint64_t total_count = 0;
  const WatchTotal* totals = nullptr;
};

// An input size (docs/complexity.md). With `function` ≠ 0 it tags one traced call: the call of
// TRACE_FUNCTION `function` whose entry event in thread `tid`'s TRACE_EVENTS stream has the
// absolute tick `entry_tick` (base_tick plus the deltas up to it); hotline_size(n) called inside
// the function. With `function` = 0 it is the size of the whole run (`hotline sweep` appends it;
// tid and entry_tick are 0). When one call is tagged twice, the last record counts.
struct SizeRecord {
  uint64_t time = 0, tid = 0, function = 0, entry_tick = 0, n = 0;
};

// The command summary of a TeX front-end (frontends/tex, docs/tex.md): per TeX command code,
// the slots main_control ran for it and their cost (ns, or tokens with --cost tokens). Running
// totals: the last record counts.
struct TexCommandsRecord {
  uint64_t time = 0;
  uint64_t count = 0;
  const std::string_view* names = nullptr;  // count names; valid only during the call
  const uint64_t* rows = nullptr;           // count × (code, slots, cost)
};

struct EndRecord {
  uint64_t time = 0;
  EndHow how = EndHow::kExit;
  uint64_t code = 0;
};

}  // namespace hotline::format

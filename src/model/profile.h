// model::Profile: the one aggregate every view reads (DESIGN.md rule 3). Views select, sort and
// print; every number they show is computed here, by model::BuildProfile.
//
// Guarantees (checked by model::CheckInvariants, and by the tests on every profile they make):
//   - Σ line time = Σ function self time = Σ file time = Σ module time = Σ stack time
//     = Σ function-line self time = total_ns;
//     a line's inclusive time is at least its own;
//   - for every function, self_ns + Σ callees' time_ns = inclusive_ns (loop_ns is not part of
//     the sum: it is time already counted in the function itself through recursion);
//   - the stacks' frames are a trie: a frame's caller comes before it, one level less deep;
//   - every sample lands somewhere: time that cannot be attributed to a real function goes to a
//     pseudo-function (`[unknown]`, `[kernel]`, `[MODULE]`, `[profiler]`, `[broken stack]`),
//     whose file is a pseudo-file of the same name, line 0;
//   - nothing is silently lost: in a CPU-time profile, a thread's CPU time that no sample stands
//     for (a thread too short for a sample, one whose sampling was paused) is `[unsampled]`, so
//     the total is the threads' CPU time.
// Entry counts (lines, calls) are estimates from sampling: +1 each time consecutive samples of
// one thread move to a different line, or push a new activation of a function or an edge. When
// the program was traced (-finstrument-functions), the calls of traced functions and of the
// edges between them are exact instead (Function::calls_exact).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "format/schema.h"
#include "model/ids.h"

namespace hotline::model {

// Why an entity is a pseudo-entry rather than real code; kNone for real code.
enum class PseudoKind : uint8_t {
  kNone,
  kUnknown,      // an address in no module (or a module record that was lost)
  kKernel,       // an address in kernel space
  kModule,       // a module, or an address in it, without symbols: named `[module name]`
  kProfiler,     // samples taken inside the runtime itself
  kBrokenStack,  // the missing outer part of a stack: `[truncated]` (cut by the stack copy or
                 // --max-depth) or `[broken stack]` (a frame the walk could not follow)
  kUnsampled,    // CPU time a thread used that no sample stands for
};

// The name of the kUnsampled function, its file and its module; kept by the history database,
// which stores names only.
inline constexpr char kUnsampledName[] = "[unsampled]";

// One row's time across the runs a profile adds up (hotline merge, hotline tex --repeat): the
// least and the greatest of its per-run times, and their squares' sum (the standard deviation's).
// A run without the row counts 0. Summary::runs says how many runs; with one, all is its time.
struct RunSpread {
  uint32_t seen = 0;  // runs that have the row
  uint64_t min_ns = 0, max_ns = 0;
  double sum_squares = 0;
  // Adds one run's time of the row.
  void add(uint64_t ns) {
    min_ns = seen ? std::min(min_ns, ns) : ns;
    max_ns = seen ? std::max(max_ns, ns) : ns;
    sum_squares += double(ns) * double(ns);
    ++seen;
  }
};

struct Module {
  std::string path;  // pseudo-modules (for pseudo-functions outside any module) are `[...]`
  PseudoKind pseudo = PseudoKind::kNone;
  std::string name;      // file name of `path`
  std::string build_id;  // raw bytes
  uint64_t self_ns = 0;  // time of samples whose innermost frame is in this module
  uint64_t samples = 0;
  // Where it was first seen mapped: runtime address = ELF virtual address + bias, the mapping
  // [start, start + size) holding the file from file_offset. All 0 for pseudo-modules.
  uint64_t bias = 0, start = 0, size = 0, file_offset = 0;
};

struct File {
  std::string path;  // as the debug info names it; pseudo-files are `[...]`
  PseudoKind pseudo = PseudoKind::kNone;
  uint64_t time_ns = 0;  // Σ of its lines
  uint64_t count = 0;    // Σ of its lines' entry counts
  uint32_t lines_hit = 0;
  RunSpread spread{};  // of time_ns
};

struct Line {
  FileId file;
  uint32_t line = 0;  // 0 = no line information
  uint64_t time_ns = 0;
  uint64_t count = 0;        // estimated entries, see above; executions when count_exact
  uint64_t samples = 0;      // samples whose innermost frame is at this line
  bool count_exact = false;  // executions counted by gcov (--coverage builds)
  // Time of the samples with this line anywhere on their stack, once per sample: for a line
  // that calls, its own time and its callees'. Never below time_ns.
  uint64_t inclusive_ns = 0;
  RunSpread spread{};  // of time_ns
};

// A function is identified by (name, definition file, definition line): two static functions of
// one name in two files are two functions; the inlined copies of one function are one function.
struct Function {
  std::string name;
  FileId file;        // definition file; invalid when unknown
  uint32_t line = 0;  // definition line; 0 when unknown
  ModuleId module;    // a pseudo-module for pseudo-functions that belong to no module
  PseudoKind pseudo = PseudoKind::kNone;
  uint64_t self_ns = 0;
  uint64_t inclusive_ns = 0;  // only outermost activations count: never above the total
  uint64_t calls = 0;         // estimated activations, see above; exact when calls_exact
  uint64_t samples = 0;       // samples with this function innermost
  bool calls_exact = false;   // counted by -finstrument-functions tracing
  // Timed tracing: exact per-call times (inclusive of callees), when `timed`.
  bool timed = false;
  uint64_t traced_inclusive_ns = 0;  // outermost activations only
  uint64_t traced_self_ns = 0;
  uint64_t traced_min_ns = 0, traced_max_ns = 0;
  uint64_t traced_call_sum_ns = 0;  // Σ of every call's duration: the average's numerator
  uint32_t end_line = 0;            // its last line, from gcov (--coverage builds); 0 when unknown
  RunSpread spread{};               // of self_ns
  RunSpread inclusive_spread{};     // of inclusive_ns
};

// One parent→child edge of the call graph, kept in its parent's section.
struct CallEdge {
  FunctionId child;
  uint64_t time_ns = 0;  // time in the child not spent in a recursion back into the parent
  uint64_t loop_ns = 0;  // time in the child that recursion brought back into the parent
  uint64_t calls = 0;    // activations of this edge; n in "n/m", m being the child's calls
};

// The time of one line within one function: a line of a header inlined into two functions is a
// row in each. self_ns: samples innermost there; inclusive_ns: samples with it on the stack,
// once per sample. Σ self_ns = the total.
struct FunctionLine {
  FunctionId function;
  LineId line;
  uint64_t self_ns = 0;
  uint64_t inclusive_ns = 0;
};

// One frame of the sampled stacks: the function, the line it was at (the sampled line for the
// innermost frame, the line of the call for the others, inline levels included) and the code
// address, shared by the inline levels of one address (0 for pseudo-frames).
//
// The frames form a trie: each names its caller, the frame outside it, and stacks that begin
// alike share their outer frames. A stack costs its innermost frame plus the frames no other
// stack has, so the samples of a recursion 20,000 deep, one at each depth, hold 40,000 frames
// (each level as a caller and as a sample's innermost frame), not 200 million. Frames are not
// unique: two may hold the same function, line and address under one caller. Guarantees: a frame's
// caller comes before it in Profile::stack_frames, and its depth is its caller's plus one (1 for an
// outermost frame).
struct StackFrame {
  FunctionId function{};
  LineId line{};
  uint64_t address = 0;
  FrameId caller{};    // invalid for an outermost frame
  uint32_t depth = 1;  // frames from the outermost to this one, both included
};

// A distinct stack the samples saw: its innermost frame, under which its callers are (see
// Profile::framesOf). Two stacks may hold the same functions at different addresses.
struct Stack {
  FrameId leaf;  // invalid for a stack without frames
};

// The time one stack stands for on one thread. Σ ns over all = the total.
struct StackTime {
  StackId stack;
  uint32_t thread = 0;  // index into Profile::threads
  uint64_t ns = 0;
  uint64_t samples = 0;  // 0 for [unsampled] time
};

struct Thread {
  uint64_t tid = 0;
  std::string name;
  uint64_t time_ns = 0;       // its share of the total: sampled, plus unsampled_ns
  uint64_t unsampled_ns = 0;  // CPU time beyond the samples: its [unsampled] entry
  uint64_t samples = 0;
  std::optional<uint64_t> cpu_ns;  // the thread's CPU time at its end, when recorded
};

// A sample as the raw views (-R, -s) show it. Kept only when BuildOptions::keep_samples.
struct Sample {
  uint64_t tid = 0;
  uint64_t time = 0;  // CLOCK_MONOTONIC ns, as recorded
  uint64_t ns = 0;    // the time it stands for: weight × period
  FunctionId leaf;
  LineId line;
  StackId stack;
  uint32_t depth = 0;  // function frames, inline frames and pseudo-frames included
  uint32_t flags = 0;  // format::SampleFlags
  // The innermost frame's runtime address (0 when the sample has no frames) and, when it lies
  // in a module, the same address as an ELF virtual address of that module: what the raw view
  // shows for code without symbols (`libfoo.so+0x1234`).
  uint64_t address = 0;
  std::optional<uint64_t> module_address;
  // Stack changes from the thread's previous sample: `popped` frames left, then `pushed`
  // (outermost first) entered.
  uint32_t popped = 0;
  std::vector<FunctionId> pushed;
};

// One call of a timed trace (--trace=timed), from its entry to its exit. Kept only when
// BuildOptions::keep_calls.
struct TracedCall {
  uint64_t tid = 0;
  FunctionId function;
  uint64_t start_ns = 0, end_ns = 0;  // CLOCK_MONOTONIC, as the trace's ticks say
  uint32_t depth = 0;                 // traced calls open around it on its thread
};

// One timed call that hotline_size(n) tagged with its input size (docs/complexity.md): its
// function, n, and the call's exact elapsed duration, callees included.
struct SizedCall {
  FunctionId function;
  uint64_t n = 0;
  uint64_t ns = 0;
};

struct Mark {
  uint64_t time = 0, tid = 0;
  std::string label;
};

struct StateChange {
  uint64_t time = 0, tid = 0;
  bool on = false;
  uint32_t source = 0;  // format::StateSource
};

struct Summary {
  uint64_t total_ns = 0;
  uint64_t samples = 0;           // SAMPLE records
  uint64_t weighted_samples = 0;  // Σ weight
  uint64_t period_ns = 0;
  uint32_t max_depth = 0;
  uint32_t files = 0;                      // files with time
  uint32_t functions = 0;                  // functions with time
  uint64_t broken_samples = 0;             // unwinding failed part way, or a stack node was lost
  uint64_t truncated_samples = 0;          // stack cut at the maximum depth
  uint64_t profiler_samples = 0;           // taken inside the runtime
  uint64_t unknown_samples = 0;            // innermost frame outside every module
  uint64_t samples_switched_off = 0;       // kernel samples while the program had sampling off
  uint64_t first_time = 0, last_time = 0;  // of the samples, CLOCK_MONOTONIC
  bool exact_line_counts = false;          // line counts from gcov, not estimates
  bool interpreted = false;  // named frames of an interpreter's front-end (format::FrameRecord)
  bool traced = false;       // exact calls from -finstrument-functions
  bool trace_timed = false;  // and exact per-call times
  bool watched = false;      // WATCH records: model/watch.h builds what they say (report -W, html)
  uint32_t max_call_depth = 0;     // deepest traced call stack (timed tracing; 0: not known)
  uint64_t traced_total_ns = 0;    // timed: Σ over threads of the outermost calls' time
  uint64_t start_time = 0;         // of the process record (0 when lost)
  uint64_t start_realtime_ns = 0;  // the same moment as Unix time (0 when lost)
  format::ClockMode clock = format::ClockMode::kCpu;  // what the samples measure
  format::Sampler sampler = format::Sampler::kNone;
  // CPU time against samples (CPU-clock profiles whose sampling was never switched off):
  bool cpu_compared = false;
  uint64_t cpu_ns = 0;                   // Σ of the threads' recorded CPU time
  uint64_t sampled_ns = 0;               // Σ of the samples' time
  uint64_t unsampled_ns = 0;             // Σ of the threads' [unsampled] time
  uint32_t threads_cpu_unknown = 0;      // threads whose CPU time was not recorded
  std::optional<format::EndRecord> end;  // how the run ended; none: killed, or died unfinished
  std::string exe;
  uint64_t pid = 0;  // the process's (the first run's, for profiles read together)
  std::vector<std::string> argv;
  // The input size of the whole run (a SIZE record without a call: `hotline sweep`).
  std::optional<uint64_t> run_size;
  // The runs the profile adds up (a file of several: hotline merge, hotline tex --repeat); the
  // rows' RunSpreads are over these.
  uint32_t runs = 1;
};

struct TexCommand {
  uint64_t code = 0;
  std::string name;
  uint64_t slots = 0, ns = 0;
  RunSpread spread{};  // of ns
};
// By decreasing time, then name: the order every view shows.
inline void SortTexCommands(std::vector<TexCommand>& commands) {
  std::sort(commands.begin(), commands.end(), [](const TexCommand& a, const TexCommand& b) {
    return a.ns != b.ns ? a.ns > b.ns : a.name < b.name;
  });
}

class Profile {
 public:
  Summary summary;
  std::vector<Module> modules;  // every module mapped (hotline's runtime aside), sampled or not
  std::vector<File> files;      // sorted by path: a FileId is a stable file number
  std::vector<Line> lines;      // sorted by (file, line)
  std::vector<Function> functions;
  // Indexed by FunctionId: the callees of each function, by decreasing time.
  std::vector<std::vector<CallEdge>> callees;
  std::vector<Thread> threads;           // in order of first appearance
  std::vector<StackFrame> stack_frames;  // the trie of the stacks' frames, callers first
  std::vector<Stack> stacks;
  std::vector<StackTime> stack_times;        // by stack, then thread
  std::vector<FunctionLine> function_lines;  // by function, then line
  std::vector<Sample> samples;               // empty unless kept
  std::vector<TracedCall> calls;  // timed traces' calls, by thread then entry; empty unless kept
  std::vector<SizedCall> sized_calls;  // calls tagged by hotline_size(), in order of their end
  std::vector<Mark> marks;
  std::vector<StateChange> states;
  std::vector<std::pair<std::string, uint64_t>> runtime_stats;
  std::vector<std::string> disabled_reasons;
  std::vector<std::string> notes;  // how the profile was recorded (NOTE records)
  // The texts of sources that exist in no file (`perl -e`, string evals), by the file name
  // their lines carry (SOURCE records).
  std::map<std::string, std::string> sources;
  // A TeX front-end's command summary (TEX_COMMANDS): per TeX command, the slots main_control
  // ran for it and their time (ns; tokens in --cost tokens profiles), by decreasing time.
  std::vector<TexCommand> tex_commands;
  // Problems met while building (missing process record, dangling ids, symbolizer warnings):
  // one line each, for the CLI to print as warnings.
  std::vector<std::string> warnings;
  // When the profile was restricted to one thread (BuildOptions::thread).
  std::optional<uint64_t> only_thread;

  const Function& function(FunctionId id) const { return functions[id.index()]; }
  const File& file(FileId id) const { return files[id.index()]; }
  const Line& line(LineId id) const { return lines[id.index()]; }
  const Module& module(ModuleId id) const { return modules[id.index()]; }
  const std::vector<CallEdge>& calleesOf(FunctionId id) const { return callees[id.index()]; }
  const StackFrame& frame(FrameId id) const { return stack_frames[id.index()]; }
  // The frames of stack `id`, outermost first, into `out` (whatever it held is replaced): time
  // and memory in its depth. Views that visit every stack should walk the trie instead where
  // they can (see model/stack_tree.h), as a profile's stacks together may be far deeper than
  // its frames.
  void framesOf(StackId id, std::vector<StackFrame>& out) const {
    out.clear();
    for (FrameId f = stacks[id.index()].leaf; f.valid(); f = frame(f).caller)
      out.push_back(frame(f));
    std::reverse(out.begin(), out.end());
  }
  uint32_t depthOf(StackId id) const {
    FrameId leaf = stacks[id.index()].leaf;
    return leaf.valid() ? frame(leaf).depth : 0;
  }
  // Adds a stack of `frames` (outermost first; their callers and depths are set here) as frames
  // of its own, shared with no other stack, and returns its id: for profiles made by hand.
  StackId addStack(std::span<const StackFrame> frames) {
    FrameId caller;
    for (StackFrame f : frames) {
      f.caller = caller;
      f.depth = caller.valid() ? frame(caller).depth + 1 : 1;
      caller = FrameId(stack_frames.size());
      stack_frames.push_back(f);
    }
    stacks.push_back(Stack{caller});
    return StackId(stacks.size() - 1);
  }
  // Percent of the total, 0 for an empty profile.
  double percentOfTotal(uint64_t ns) const {
    return summary.total_ns
               ? 100.0 * static_cast<double>(ns) / static_cast<double>(summary.total_ns)
               : 0.0;
  }
};

}  // namespace hotline::model

// Devel::Hotline's state and the functions its parts share (docs/perl.md). One profiler per
// process, for the interpreter that loaded the module; `g` is it. Everything the final write
// needs is copied out of perl when first seen, so the profile can be finished from an atexit
// handler, after the interpreter is gone.
#pragma once

#include <pthread.h>
#include <time.h>
#include <x86intrin.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "format/schema.h"
#include "format/writer.h"

#define PERL_NO_GET_CONTEXT
extern "C" {
#include "EXTERN.h"
#include "XSUB.h"
#include "perl.h"
}

namespace hotline::perl {

namespace fmt = hotline::format;

inline uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

inline uint64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

inline uint64_t ProcessCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

inline uint64_t Ticks() { return __rdtsc(); }

// A source file as the profile names it ("x.pl", "(eval 3)[x.pl:5]", "-e").
struct SourceFile {
  std::string name;
  std::string text;  // the source of an eval or of -e, which exists in no file
  bool text_written = false;
  bool own = false;  // Devel/Hotline.pm: its END block is the profiler's, not the program's
};

// A sub as perl programmers know it, or the main program (index 0).
struct Sub {
  std::string name;
  std::string def_file;
  uint64_t def_line = 0;
  uint32_t def_frame = 0;  // the frame (name, def_file, def_line), 1-based; 0 for main
  bool trace_written = false;
  bool underscore_exit = false;  // POSIX::_exit: the profile must be finished before it runs
  bool profiler = false;         // Devel::Hotline's own (its END block, start, stop): not measured
  bool slow_op = false;          // an op timed as a sub: NYTProf's Pkg::CORE:name
  const void* owner = nullptr;   // the CV whose free is watched (names.cc: ForgetSub)
  bool orphaned = false;         // that CV is gone, but not the op tree it shared
};

struct Frame {
  uint32_t sub = 0;
  uint32_t file = UINT32_MAX;  // UINT32_MAX: none (an XSUB)
  uint64_t line = 0;
  bool written = false;
};

struct Node {
  uint32_t parent = 0;   // 1-based node index, 0 = root
  uint32_t frame = 0;    // 1-based frame index; 0 for a native frame
  uint64_t address = 0;  // a native frame's code address (sampling mode)
  uint64_t writer_id = 0;
};

// An ELF image of the process, written as MODULE_LOAD once a native frame lies in it.
struct NativeModule {
  uint64_t start = 0, size = 0;
  bool written = false;
};

// One statement (COP). Its node is cached for the activation it last ran in.
struct Statement {
  U32 seq = 0;  // the COP's cop_seq: unique per COP, while a freed COP's address is reused
  uint32_t file = 0;
  uint64_t line = 0;
  uint64_t count = 0;    // executions
  uint64_t written = 0;  // executions as the last LINE_COUNTS said
  uint32_t sub = UINT32_MAX;
  uint32_t parent = UINT32_MAX;
  uint32_t frame = 0;  // (sub, file, line)'s
  uint32_t node = 0;
  // The nodes it had under the parents before (a sub called from several places in turn), and
  // the node of the slow op or XSUB it ran last (under caller node timed_caller): both are
  // looked up here first, where the statement's own cache line already is.
  static constexpr int kOtherParents = 3;
  uint32_t other_parent[kOtherParents] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
  uint32_t other_node[kOtherParents] = {};
  uint32_t timed_caller = UINT32_MAX, timed_sub = UINT32_MAX, timed_node = 0;
};

struct Activation {
  uint32_t sub = 0;
  uint32_t parent = 0;    // the caller's node when the sub was entered
  uint32_t node = 0;      // the node of the statement running in this activation
  bool profiler = false;  // a sub of Devel::Hotline's own, measured by nobody
  bool resume = false;    // for those: whether measuring was on when it was entered
  // An XSUB or a slow op timed as a sub: the context stack's top when it was called (-1: a Perl
  // sub, which its own destructor leaves). Code running above that level is its callbacks'
  // (a sort block, List::Util::first's block, a sub it calls); below it, it died.
  int32_t timed_cx = -1;
};

// Open addressing from a pair of integers (or a pointer: a COP, a CV, an op tree) to a 32-bit
// index: the tables a statement or a call looks up (statements, subs, frames, stack nodes, slow
// ops' subs), where a node-based map's lookup, and a key formatted as text, cost more than the
// rest of the statement's bookkeeping.
class PairIndex {
 public:
  PairIndex() { slots_.assign(1024, Slot{}); }
  uint32_t* find(uint64_t a, uint64_t b) {
    size_t mask = slots_.size() - 1;
    for (size_t i = Hash(a, b) & mask;; i = (i + 1) & mask) {
      if (!slots_[i].used) return nullptr;
      if (slots_[i].a == a && slots_[i].b == b && !slots_[i].retired) return &slots_[i].value;
    }
  }
  uint32_t* find(const void* key) { return find(uintptr_t(key), 0); }
  void insert(const void* key, uint32_t value) { insert(uintptr_t(key), 0, value); }
  // The key names nothing any more (its memory may be another's next): its slot stays taken
  // until the table grows, so that the keys probed past it are still found.
  void retire(const void* key) {
    size_t mask = slots_.size() - 1;
    for (size_t i = Hash(uintptr_t(key), 0) & mask; slots_[i].used; i = (i + 1) & mask) {
      if (slots_[i].a == uintptr_t(key) && slots_[i].b == 0 && !slots_[i].retired) {
        slots_[i].retired = true;
        return;
      }
    }
  }
  void insert(uint64_t a, uint64_t b, uint32_t value) {
    if ((used_ + 1) * 2 > slots_.size()) grow();
    size_t mask = slots_.size() - 1;
    size_t i = Hash(a, b) & mask;
    while (slots_[i].used) i = (i + 1) & mask;
    slots_[i] = Slot{a, b, value, true, false};
    ++used_;
  }

 private:
  struct Slot {
    uint64_t a = 0, b = 0;
    uint32_t value = 0;
    bool used = false, retired = false;
  };
  static size_t Hash(uint64_t a, uint64_t b) {
    uint64_t h = a * 0x9E3779B97F4A7C15ull ^ b * 0xC2B2AE3D27D4EB4Full;
    return size_t(h ^ (h >> 29));
  }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.size() * 2, Slot{});
    used_ = 0;
    for (const Slot& s : old)
      if (s.used && !s.retired) insert(s.a, s.b, s.value);
  }
  std::vector<Slot> slots_;
  size_t used_ = 0;
};

struct PairHash {
  size_t operator()(const std::pair<uint64_t, uint64_t>& p) const {
    return size_t(p.first * 0x9E3779B97F4A7C15ull ^ (p.second + 0x632BE59BD9B4E019ull));
  }
};

// What one interpreter (the main one, or an ithread's clone) is doing. Each thread's time and
// calls are its own; the names, frames, nodes and statement counts are shared.
struct ThreadState {
  PerlInterpreter* interp = nullptr;
  uint64_t tid = 0;
  // Devel::Hotline::stop() / start() (NYTProf's DB::disable_profile / DB::enable_profile):
  // while off, no time is charged and nothing is counted; the sub stack is still followed.
  bool on = true;
  bool ended = false;
  uint64_t last = 0;  // ticks at the last charge
  uint64_t flush_deadline = 0;
  uint32_t current = 0;             // the node being charged
  uint32_t statement = UINT32_MAX;  // the statement running (index in Profiler::statements)
  uint64_t max_depth = 0;
  std::vector<Activation> stack;
  std::vector<uint64_t> ticks;  // per node (index node - 1): exclusive time since the last flush
  // (caller sub, callee sub) → calls; sub 0 = the main program. Running totals.
  std::unordered_map<std::pair<uint64_t, uint64_t>, uint64_t, PairHash> calls;
  bool calls_changed = false;  // since the last CALL_COUNTS
  // A call of a sub that does not exist (perl dies in entersub): counted at the next event,
  // unless entersub returned (an AUTOLOAD ran instead). The caller's sub and the callee's name.
  bool undefined_pending = false;
  uint32_t undefined_caller = 0;
  std::string undefined_callee;
  // The runops loop is about to run an op (entersub, a slow op) whose function is a watch of
  // exact.cc (WatchEntersub, WatchSlowOp), which then has nothing to do.
  bool op_ours = false;
};

struct Profiler {
  PerlInterpreter* interp = nullptr;  // the main interpreter, which loaded the module
  bool sampling = false;  // sampled (sampling.cc) rather than measured statement by statement
  bool active = false;
  bool finished = false;
  // HOTLINE_PERL_START=init|end: the phase (PL_phase) whose start turns measuring on, once.
  int start_phase = 0;

  std::string script;  // $0 as perl started
  std::string output;  // the file being written
  int fd = -1;
  fmt::Writer writer;
  // A forked child's profile is begun at the first op it runs: a child that only execs
  // (system, backticks, open with a command) leaves no file.
  bool child_pending = false;

  uint64_t start_ticks = 0, start_ns = 0;
  uint64_t flush_interval_ticks = 0;

  ThreadState main_thread;
  // ithreads: the other interpreters' states, and the lock that guards everything shared once
  // the program has cloned an interpreter (`multi`, set by CLONE before the new thread runs).
  std::vector<ThreadState*> threads;
  std::recursive_mutex mutex;
  bool multi = false;
  pthread_key_t thread_key;  // its destructor ends an ithread's part of the profile

  std::vector<SourceFile> files;
  // Looked up by the COP's own string, without a std::string made for it (a sample looks up
  // every level's file).
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const { return std::hash<std::string_view>()(name); }
  };
  std::unordered_map<std::string, uint32_t, NameHash, std::equal_to<>> file_by_name;
  std::vector<Sub> subs;
  PairIndex sub_by_key;                          // by op tree (an XSUB: by CV)
  std::unordered_set<std::string> begin_blocks;  // the names Pkg::BEGIN@line given
  uint32_t begin_repeats = 0;                    // BEGIN blocks named after an earlier one
  std::unordered_map<std::string, uint32_t> undefined_subs;  // by name
  std::vector<Frame> frames;                                 // frame i+1
  PairIndex frame_by_key;                                    // (sub << 32 | file, line)
  std::vector<Node> nodes;                                   // node i+1
  PairIndex node_by_key;  // (parent, frame), or (parent, address | 1 << 63) for a native frame
  // The nodes last looked up, by a hash of (parent, frame): a statement reached from callers in
  // turn, a slow op run from the same statement, find theirs in a line the cache keeps.
  struct RecentNode {
    uint32_t parent = UINT32_MAX, frame = 0, node = 0;
  };
  static constexpr int kRecentNodeBits = 12;
  std::vector<RecentNode> recent_nodes = std::vector<RecentNode>(size_t{1} << kRecentNodeBits);
  std::vector<Statement> statements;
  PairIndex statement_by_cop;
  struct RecentStatement {  // exact.cc: OnStatement
    const COP* cop = nullptr;
    uint32_t index = 0;
  };
  static constexpr int kRecentStatementBits = 12;
  std::vector<RecentStatement> recent_statements =
      std::vector<RecentStatement>(size_t{1} << kRecentStatementBits);
  // (package stash, op type) → the slow op's pseudo-sub
  PairIndex slow_op_subs;

  uint64_t period_ns = 0;  // sampling mode: CPU time per sample
  fmt::Sampler sampler_kind = fmt::Sampler::kNone;
  std::vector<NativeModule> modules;
  bool native_unwritten = false;  // a native node was made since the modules were last scanned
};

extern Profiler* g;

// Holds the shared lock while ithreads exist; free when there is one interpreter.
class Shared {
 public:
  Shared() : locked_(g->multi) {
    if (locked_) g->mutex.lock();
  }
  ~Shared() {
    if (locked_) g->mutex.unlock();
  }
  Shared(const Shared&) = delete;
  Shared& operator=(const Shared&) = delete;

 private:
  bool locked_;
};

// The state of the interpreter running now; an ithread's is made when it first runs Perl code.
ThreadState* NewThreadState(pTHX);
inline ThreadState* StateFor(pTHX) {
  if (__builtin_expect(my_perl == g->main_thread.interp, 1)) return &g->main_thread;
  return NewThreadState(aTHX);
}

// ---- Names (names.cc) --------------------------------------------------------------------------

uint32_t FileIndex(const char* name);
// Keeps the text of a source that is in no file (-e, string evals) for the profile.
void CaptureSourceText(pTHX_ uint32_t file);
uint32_t SubIndex(pTHX_ CV* cv);
// A package's name, `main` for none.
inline std::string PackageName(HV* stash) {
  return stash && HvNAME(stash) ? HvNAME(stash) : "main";
}
// A sub that a call named but that does not exist (`eval { nosuch() }`), by its full name.
uint32_t UndefinedSubIndex(const std::string& name);
// The pseudo-sub `Pkg::CORE:name` of a slow op run from package Pkg (the current statement's).
uint32_t SlowOpSub(pTHX_ unsigned op_type);
uint32_t FrameIndex(uint32_t sub, uint32_t file, uint64_t line);
uint32_t NodeIndex(uint32_t parent, uint32_t frame);
// A native frame (a return address, or the interrupted instruction) below `parent`.
uint32_t NativeNodeIndex(uint32_t parent, uint64_t address);

// ---- The profile (output.cc) ---------------------------------------------------------------

bool BeginFile(const char* script, bool child);
void InitThreadState(ThreadState* t, PerlInterpreter* interp);
// An ithread has ended (the thread key's destructor): its time and calls are written.
void EndThread(void* state);
// Sampling mode: one sample of `weight` periods (more than one when the timer overran) at `node`.
void WriteSample(uint32_t node, uint64_t weight);
// Writes what `t` accumulated (and the shared counts) and flushes the file; schedules t's next
// flush.
void Flush(ThreadState* t);
void Finish(fmt::EndHow how, uint64_t code);
// fatal.cc: a signal that would end the program is noted by its handler (g_fatal_signal) and
// taken at the next statement boundary: the profile is written, then the program dies of it.
extern std::atomic<int> g_fatal_signal;
void InstallFatalHandlers();
[[noreturn]] void TakeFatalSignal();
// sampling.cc: makes the next statement boundary look (async-signal-safe).
void NoteFatalSignal();
void FinishAtExit();
void AtForkChild();
// Begins the forked child's own profile (child_pending); called from the runops loops.
void BeginForkedChild();

// Charges the time up to `now` to the thread's current node.
inline void Charge(ThreadState* t, uint64_t now) {
  if (t->current && t->on) {
    if (__builtin_expect(t->current > t->ticks.size(), 0)) t->ticks.resize(g->nodes.size());
    t->ticks[t->current - 1] += now - t->last;
  }
  t->last = now;
}

// Turns measuring on when the phase HOTLINE_PERL_START names has come (INIT or END).
inline void StartAtPhase(pTHX_ ThreadState* t, uint64_t now) {
  if (__builtin_expect(g->start_phase != 0, 0) && int(PL_phase) >= g->start_phase) {
    g->start_phase = 0;
    t->on = true;
    t->last = now;
  }
}

// ---- Measuring every statement (exact.cc) ----------------------------------------------------

int RunOpsExact(pTHX);
// Become PL_ppaddr's entersub and slow ops: an XSUB or a slow op that perl or XS code runs
// itself (an overloaded operator, IO::Handle::getline's readline) is measured too.
void WatchOps();

// ---- Sampling (sampling.cc) ----------------------------------------------------------------

// Arms the CPU-time clock whose signal asks for a sample (before the profile is begun: the
// process record says which clock it is) and the statement wrapper that takes the samples.
bool StartSampling(pTHX_ uint64_t period_ns);
// Called where a process is about to exec or has forked: the timer is per process.
void StopSamplingTimer();
void RearmSamplingTimerInChild();

}  // namespace hotline::perl

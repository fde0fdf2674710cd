// Devel::Hotline's XS part: an exact statement-level profiler for perl (docs/perl.md).
//
// The module replaces PL_runops with a loop of its own that notes each statement (nextstate /
// dbstate op) before it runs and each sub call (entersub op). One rdtsc per statement; time
// runs from the start of one statement to the start of the next (NYTProf's rule) and goes to
// the stack node that was current: (the caller's node, the sub at this line). The profile is
// written with hotline's streaming writer: frames, stack nodes, one SAMPLE per node carrying the
// exclusive nanoseconds spent there, exact line counts and exact call counts.
//
// Everything the final write needs is copied out of perl when first seen, so the profile can be
// finished from an atexit handler, after the interpreter is gone.
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
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

namespace {

namespace fmt = hotline::format;

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

uint64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

uint64_t ProcessCpuNs() {
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
};

struct Frame {
  uint32_t sub = 0;
  uint32_t file = UINT32_MAX;  // UINT32_MAX: none (an XSUB)
  uint64_t line = 0;
  bool written = false;
};

struct Node {
  uint32_t parent = 0;  // 1-based node index, 0 = root
  uint32_t frame = 0;   // 1-based frame index
  uint64_t writer_id = 0;
  uint64_t ticks = 0;  // exclusive time since the last flush
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
  uint32_t node = 0;
};

struct Activation {
  uint32_t sub = 0;
  uint32_t parent = 0;    // the caller's node when the sub was entered
  uint32_t node = 0;      // the node of the statement running in this activation
  bool profiler = false;  // a sub of Devel::Hotline's own, measured by nobody
  bool resume = false;    // for those: whether measuring was on when it was entered
};

// Open addressing from a pointer (COP*, CV*, op tree) to a 32-bit index.
class PointerIndex {
 public:
  PointerIndex() { slots_.assign(1024, Slot{}); }
  uint32_t* find(const void* key) {
    size_t mask = slots_.size() - 1;
    for (size_t i = Hash(key) & mask;; i = (i + 1) & mask) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (!slots_[i].key) return nullptr;
    }
  }
  void insert(const void* key, uint32_t value) {
    if ((used_ + 1) * 2 > slots_.size()) grow();
    size_t mask = slots_.size() - 1;
    size_t i = Hash(key) & mask;
    while (slots_[i].key) i = (i + 1) & mask;
    slots_[i] = Slot{key, value};
    ++used_;
  }

 private:
  struct Slot {
    const void* key = nullptr;
    uint32_t value = 0;
  };
  static size_t Hash(const void* key) {
    return size_t((uintptr_t(key) >> 3) * 0x9E3779B97F4A7C15ull >> 17);
  }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.size() * 2, Slot{});
    used_ = 0;
    for (const Slot& s : old)
      if (s.key) insert(s.key, s.value);
  }
  std::vector<Slot> slots_;
  size_t used_ = 0;
};

struct PairHash {
  size_t operator()(const std::pair<uint64_t, uint64_t>& p) const {
    return size_t(p.first * 0x9E3779B97F4A7C15ull ^ (p.second + 0x632BE59BD9B4E019ull));
  }
};

struct Profiler {
  PerlInterpreter* interp = nullptr;
  bool active = false;
  bool finished = false;
  // Devel::Hotline::stop() / start() (NYTProf's DB::disable_profile / DB::enable_profile):
  // while off, no time is charged and nothing is counted; the sub stack is still followed.
  bool on = true;

  std::string script;  // $0 as perl started
  std::string output;  // the file being written
  int fd = -1;
  fmt::Writer writer;
  bool forked_child = false;

  uint64_t start_ticks = 0, start_ns = 0;
  uint64_t last = 0;  // ticks at the last charge
  uint64_t flush_deadline = 0;
  uint64_t flush_interval_ticks = 0;
  uint32_t current = 0;  // the node being charged
  uint64_t max_depth = 0;

  std::vector<SourceFile> files;
  std::unordered_map<std::string, uint32_t> file_by_name;
  std::vector<Sub> subs;
  PointerIndex sub_by_key;
  std::vector<Frame> frames;  // frame i+1
  std::unordered_map<std::string, uint32_t> frame_by_key;
  std::vector<Node> nodes;  // node i+1
  std::unordered_map<std::pair<uint64_t, uint64_t>, uint32_t, PairHash> node_by_key;
  std::vector<Statement> statements;
  PointerIndex statement_by_cop;
  std::vector<Activation> stack;
  // (caller sub, callee sub) → calls; sub 0 = the main program. Running totals.
  std::unordered_map<std::pair<uint64_t, uint64_t>, uint64_t, PairHash> calls;
  bool calls_changed = false;  // since the last CALL_COUNTS
};

Profiler* g = nullptr;

// ---- Names -----------------------------------------------------------------------------------

uint32_t FileIndex(const char* name) {
  auto it = g->file_by_name.find(name);
  if (it != g->file_by_name.end()) return it->second;
  uint32_t index = uint32_t(g->files.size());
  size_t len = std::strlen(name);
  bool own = len >= 17 && std::strcmp(name + len - 17, "/Devel/Hotline.pm") == 0;
  g->files.push_back(SourceFile{name, {}, false, own});
  g->file_by_name.emplace(name, index);
  return index;
}

// The text of a source that is in no file: perl keeps its lines in @{"_<NAME"} ($^P 0x400).
void CaptureSourceText(pTHX_ uint32_t file) {
  const std::string& name = g->files[file].name;
  bool in_no_file = name == "-e" || name.rfind("(eval ", 0) == 0;
  if (!in_no_file) return;
  GV* gv = gv_fetchfile_flags(name.c_str(), name.size(), 0);
  if (!gv || !GvAV(gv)) return;
  AV* lines = GvAV(gv);
  std::string text;
  for (SSize_t i = 1; i <= av_top_index(lines); ++i) {
    SV** sv = av_fetch(lines, i, 0);
    if (!sv || !SvOK(*sv)) {
      text += '\n';
      continue;
    }
    STRLEN len;
    const char* p = SvPV(*sv, len);
    text.append(p, len);
    if (len == 0 || p[len - 1] != '\n') text += '\n';
  }
  g->files[file].text = std::move(text);
}

// The first statement line of a sub's body, for subs %DB::sub does not know.
uint64_t FirstLine(CV* cv) {
  int steps = 0;
  for (OP* o = CvSTART(cv); o && steps < 64; o = o->op_next, ++steps) {
    if (o->op_type == OP_NEXTSTATE || o->op_type == OP_DBSTATE) return CopLINE(cCOPx(o));
  }
  return 0;
}

std::string SubName(pTHX_ CV* cv) {
  std::string package, name;
  if (CvNAMED(cv)) {
    HEK* hek = CvNAME_HEK(cv);
    name.assign(HEK_KEY(hek), HEK_LEN(hek));
    HV* stash = CvSTASH(cv);
    if (stash && HvNAME(stash)) package = HvNAME(stash);
  } else if (GV* gv = CvGV(cv)) {
    name.assign(GvNAME(gv), GvNAMELEN(gv));
    HV* stash = GvSTASH(gv);
    if (stash && HvNAME(stash)) package = HvNAME(stash);
  }
  if (name.empty()) name = "__ANON__";
  if (package.empty()) package = "main";
  return package + "::" + name;
}

uint32_t SubIndex(pTHX_ CV* cv) {
  // Closures share their prototype's op tree: one sub, however many clones.
  const void* key = CvISXSUB(cv) ? static_cast<const void*>(cv) : CvSTART(cv);
  if (!key) key = cv;
  if (uint32_t* found = g->sub_by_key.find(key)) return *found;
  Sub sub;
  sub.name = SubName(aTHX_ cv);
  if (!CvISXSUB(cv)) {
    // %DB::sub{NAME} = "FILE:FIRST-LAST" ($^P 0x10).
    if (HV* db_sub = get_hv("DB::sub", 0)) {
      SV** range = hv_fetch(db_sub, sub.name.c_str(), I32(sub.name.size()), 0);
      if (range && SvOK(*range)) {
        STRLEN len;
        const char* p = SvPV(*range, len);
        std::string text(p, len);
        size_t colon = text.rfind(':');
        if (colon != std::string::npos) {
          sub.def_file = text.substr(0, colon);
          sub.def_line = std::strtoull(text.c_str() + colon + 1, nullptr, 10);
        }
      }
    }
    if (sub.def_file.empty()) {
      OP* start = CvSTART(cv);
      for (int steps = 0; start && steps < 64; start = start->op_next, ++steps) {
        if (start->op_type == OP_NEXTSTATE || start->op_type == OP_DBSTATE) {
          sub.def_file = CopFILE(cCOPx(start)) ? CopFILE(cCOPx(start)) : "";
          break;
        }
      }
      sub.def_line = FirstLine(cv);
    }
    size_t bare = sub.name.rfind("::");
    bare = bare == std::string::npos ? 0 : bare + 2;
    if (sub.name.compare(bare, std::string::npos, "__ANON__") == 0) {
      sub.name += "[" + sub.def_file + ":" + std::to_string(sub.def_line) + "]";
    } else if (sub.name.compare(bare, std::string::npos, "BEGIN") == 0) {
      sub.name += "@" + std::to_string(sub.def_line);
    }
  }
  sub.underscore_exit = sub.name == "POSIX::_exit";
  sub.profiler = sub.name.rfind("Devel::Hotline::", 0) == 0;
  uint32_t index = uint32_t(g->subs.size());
  // The definition's frame: the sub at its first line.
  Frame def;
  def.sub = index;
  def.file = sub.def_file.empty() ? UINT32_MAX : FileIndex(sub.def_file.c_str());
  def.line = sub.def_line;
  g->frames.push_back(def);
  sub.def_frame = uint32_t(g->frames.size());
  g->subs.push_back(std::move(sub));
  g->sub_by_key.insert(key, index);
  return index;
}

uint32_t FrameIndex(uint32_t sub, uint32_t file, uint64_t line) {
  char key[64];
  std::snprintf(key, sizeof key, "%u:%u:%llu", sub, file, static_cast<unsigned long long>(line));
  auto it = g->frame_by_key.find(key);
  if (it != g->frame_by_key.end()) return it->second;
  g->frames.push_back(Frame{sub, file, line, false});
  uint32_t index = uint32_t(g->frames.size());
  g->frame_by_key.emplace(key, index);
  return index;
}

uint32_t NodeIndex(uint32_t parent, uint32_t frame) {
  auto key = std::make_pair(uint64_t(parent), uint64_t(frame));
  auto it = g->node_by_key.find(key);
  if (it != g->node_by_key.end()) return it->second;
  g->nodes.push_back(Node{parent, frame, 0, 0});
  uint32_t index = uint32_t(g->nodes.size());
  g->node_by_key.emplace(key, index);
  return index;
}

// ---- Writing ---------------------------------------------------------------------------------

uint64_t TicksToNs(uint64_t ticks, uint64_t now_ticks, uint64_t now_ns) {
  uint64_t span_ticks = now_ticks - g->start_ticks;
  uint64_t span_ns = now_ns - g->start_ns;
  if (span_ticks == 0) return 0;
  return uint64_t((unsigned __int128)ticks * span_ns / span_ticks);
}

void WriteFrame(uint32_t frame_index) {
  Frame& f = g->frames[frame_index - 1];
  if (f.written) return;
  f.written = true;
  const Sub& sub = g->subs[f.sub];
  fmt::FrameRecord r;
  r.id = frame_index;
  r.name = sub.name;
  if (f.file != UINT32_MAX) {
    SourceFile& file = g->files[f.file];
    r.file = file.name;
    if (!file.text.empty() && !file.text_written) {
      file.text_written = true;
      g->writer.add(fmt::SourceRecord{file.name, file.text});
    }
  }
  r.line = f.line;
  r.def_file = sub.def_file;
  r.def_line = sub.def_line;
  r.module = "perl";
  g->writer.add(r);
}

uint64_t WriteNode(uint32_t node_index) {
  Node& n = g->nodes[node_index - 1];
  if (n.writer_id) return n.writer_id;
  uint64_t parent = n.parent ? WriteNode(n.parent) : 0;
  WriteFrame(n.frame);
  n.writer_id = g->writer.internStackNode(parent, fmt::kNamedFrameTag | n.frame);
  return n.writer_id;
}

void WriteTraceFunction(uint32_t sub_index) {
  Sub& sub = g->subs[sub_index];
  if (sub.trace_written) return;
  sub.trace_written = true;
  WriteFrame(sub.def_frame);
  g->writer.add(fmt::TraceFunctionRecord{sub_index, fmt::kNamedFrameTag | sub.def_frame});
}

uint64_t Tid() { return uint64_t(syscall(SYS_gettid)); }

// Writes what accumulated since the last flush: samples (exclusive ns per node), line counts,
// call counts. Each is a delta: records of several flushes add up.
void WriteAccumulated(uint64_t now_ticks, uint64_t now_ns) {
  uint64_t tid = Tid();
  for (uint32_t i = 1; i <= g->nodes.size(); ++i) {
    Node& n = g->nodes[i - 1];
    if (!n.ticks) continue;
    uint64_t ns = TicksToNs(n.ticks, now_ticks, now_ns);
    n.ticks = 0;
    if (!ns) continue;
    fmt::SampleRecord s;
    s.time = now_ns;
    s.tid = tid;
    s.node = WriteNode(i);
    s.weight = ns;
    g->writer.add(s);
  }
  // Counts are running totals, as the format has them (the last LINE_COUNTS of a file, the last
  // CALL_COUNTS of a thread, is the count): only the files that ran since the last write.
  std::vector<std::map<uint64_t, uint64_t>> lines(g->files.size());
  std::vector<bool> ran(g->files.size(), false);
  for (Statement& st : g->statements) {
    if (!st.count) continue;
    lines[st.file][st.line] += st.count;
    if (st.count != st.written) ran[st.file] = true;
    st.written = st.count;
  }
  std::vector<uint64_t> pairs;
  for (size_t f = 0; f < lines.size(); ++f) {
    if (!ran[f] || g->files[f].own) continue;
    pairs.clear();
    for (auto [line, count] : lines[f]) {
      pairs.push_back(line);
      pairs.push_back(count);
    }
    SourceFile& file = g->files[f];
    if (!file.text.empty() && !file.text_written) {
      file.text_written = true;
      g->writer.add(fmt::SourceRecord{file.name, file.text});
    }
    g->writer.add(fmt::LineCountsRecord{file.name, "perl", pairs.size() / 2, pairs.data()});
  }
  if (g->calls_changed) {
    g->calls_changed = false;
    std::vector<uint64_t> triples;
    for (auto& [edge, count] : g->calls) {
      if (edge.first) WriteTraceFunction(uint32_t(edge.first));
      WriteTraceFunction(uint32_t(edge.second));
      triples.insert(triples.end(), {edge.first, edge.second, count});
    }
    fmt::CallCountsRecord r;
    r.time = now_ns;
    r.tid = tid;
    r.max_depth = g->max_depth;
    r.count = triples.size() / 3;
    r.triples = triples.data();
    g->writer.add(r);
  }
}

std::vector<std::string> ReadCmdline() {
  std::vector<std::string> args;
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return args;
  std::string all;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) all.append(buf, size_t(n));
  close(fd);
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    args.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  return args;
}

// HOTLINE_OUTPUT names the profile of the process `hotline record` started; any other process
// (a fork, a perl run by the program) writes BASE.PID.hotline beside it, as the runtime does.
int OpenOutput(const char* script, bool child) {
  const char* env = getenv("HOTLINE_OUTPUT");
  std::string configured;
  if (env && *env) {
    configured = env;
  } else {
    const char* slash = std::strrchr(script, '/');
    std::string base = slash ? slash + 1 : script;
    if (base.empty() || base == "-e" || base == "-") base = "perl";
    configured = base + ".hotline";
  }
  bool root = !child;
  if (root && env && *env) {
    const char* root_pid = getenv("HOTLINE_ROOT_PID");
    if (root_pid && std::strtoll(root_pid, nullptr, 10) != getppid()) root = false;
  }
  if (root) {
    g->output = configured;
    return open(configured.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
  std::string base = configured;
  if (base.size() > 8 && base.compare(base.size() - 8, 8, ".hotline") == 0)
    base.resize(base.size() - 8);
  std::string pid = std::to_string(getpid());
  for (int n = 0; n < 1000; ++n) {
    g->output = base + "." + pid + (n ? "." + std::to_string(n) : "") + ".hotline";
    int fd = open(g->output.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

bool BeginFile(const char* script, bool child) {
  g->fd = OpenOutput(script, child);
  if (g->fd < 0) {
    std::fprintf(stderr, "Devel::Hotline: cannot write %s: %s: the program runs unprofiled\n",
                 g->output.c_str(), std::strerror(errno));
    return false;
  }
  g->writer.begin(g->fd, fmt::kFeatureSamples | fmt::kFeatureTrace | fmt::kFeatureLineCounts);
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = '\0';
  std::vector<std::string> args = ReadCmdline();
  std::vector<uint64_t> argv;
  for (const std::string& a : args) argv.push_back(g->writer.internString(a.data(), a.size()));
  fmt::ProcessRecord p;
  p.pid = uint64_t(getpid());
  p.ppid = uint64_t(getppid());
  p.realtime_ns = RealtimeNs();
  p.time = g->start_ns;
  p.exe = g->writer.internString(exe);
  p.argc = argv.size();
  p.argv = argv.data();
  p.clock = fmt::ClockMode::kWall;
  p.sampler = fmt::Sampler::kNone;
  p.period_ns = 1;
  p.flags = child ? uint64_t(fmt::kForkedChild) : 0;
  p.trace = fmt::TraceMode::kCounts;
  g->writer.add(p);
  g->writer.add(fmt::ThreadStartRecord{g->start_ns, Tid(), 0, 0});
  g->writer.flush();
  return true;
}

// Charges the time up to `now` to the current node.
inline void Charge(uint64_t now) {
  if (g->current && g->on) g->nodes[g->current - 1].ticks += now - g->last;
  g->last = now;
}

void Flush() {
  uint64_t now = Ticks();
  Charge(now);
  WriteAccumulated(now, MonotonicNs());
  g->writer.flush();
  g->flush_deadline = Ticks() + g->flush_interval_ticks;
}

void Finish(fmt::EndHow how, uint64_t code) {
  if (!g || !g->active || g->finished) return;
  g->finished = true;
  uint64_t now = Ticks();
  Charge(now);
  uint64_t now_ns = MonotonicNs();
  WriteAccumulated(now, now_ns);
  g->writer.add(fmt::ThreadEndRecord{now_ns, Tid(), ProcessCpuNs()});
  g->writer.add(fmt::EndRecord{now_ns, how, code});
  g->writer.flush();
  if (g->writer.failed())
    std::fprintf(stderr, "Devel::Hotline: writing %s failed: %s\n", g->output.c_str(),
                 g->writer.error());
  close(g->fd);
  g->fd = -1;
}

void FinishAtExit() { Finish(fmt::EndHow::kExit, 0); }

// A forked child profiles itself into a file of its own; what the parent measured stays in
// the parent's profile.
void AtForkChild() {
  if (!g || !g->active || g->finished) return;
  if (g->fd >= 0) close(g->fd);
  g->writer.reset();
  for (Frame& f : g->frames) f.written = false;
  for (Node& n : g->nodes) {
    n.writer_id = 0;
    n.ticks = 0;
  }
  for (Statement& s : g->statements) s.count = s.written = 0;
  for (Sub& s : g->subs) s.trace_written = false;
  for (SourceFile& f : g->files) f.text_written = false;
  g->calls.clear();
  g->calls_changed = false;
  g->start_ticks = Ticks();
  g->start_ns = MonotonicNs();
  g->last = g->start_ticks;
  g->forked_child = true;
  if (!BeginFile(g->script.c_str(), true)) g->active = false;
}

// ---- The hot path ----------------------------------------------------------------------------

void OnSubExit(pTHX_ void* depth) {
  PERL_UNUSED_CONTEXT;
  if (!g->active || g->finished) return;
  size_t keep = size_t(uintptr_t(depth));
  if (g->stack.size() <= keep || keep == 0) return;
  Charge(Ticks());
  // Leaving one of the profiler's own subs: measuring resumes as it was before it.
  for (size_t i = keep; i < g->stack.size(); ++i)
    if (g->stack[i].profiler) {
      if (g->stack[i].resume) g->last = Ticks();
      g->on = g->stack[i].resume;
      break;
    }
  g->stack.resize(keep);
  g->current = g->stack.back().node;
}

// A Perl sub has just been entered (its context is on top): from here to its exit, whichever
// way it leaves, its statements are its own.
void EnterSub(pTHX_ CV* cv) {
  Charge(Ticks());
  uint32_t callee = SubIndex(aTHX_ cv);
  uint32_t caller = g->stack.back().sub;
  bool profiler = g->subs[callee].profiler;
  if (g->on && !profiler) {
    ++g->calls[{caller, callee}];
    g->calls_changed = true;
  }
  g->stack.push_back(Activation{callee, g->current, g->current, profiler, g->on});
  if (profiler) g->on = false;
  if (g->stack.size() - 1 > g->max_depth) g->max_depth = g->stack.size() - 1;
  SAVEDESTRUCTOR_X(OnSubExit, reinterpret_cast<void*>(uintptr_t(g->stack.size() - 1)));
}

void OnStatement(pTHX_ COP* cop) {
  uint64_t now = Ticks();
  Charge(now);
  uint32_t* found = g->statement_by_cop.find(cop);
  Statement* st;
  if (found && g->statements[*found].seq == cop->cop_seq) {
    st = &g->statements[*found];
  } else {
    const char* file = CopFILE(cop);
    uint32_t file_index = FileIndex(file ? file : "");
    if (g->files[file_index].text.empty()) CaptureSourceText(aTHX_ file_index);
    Statement fresh;
    fresh.seq = cop->cop_seq;
    fresh.file = file_index;
    fresh.line = CopLINE(cop);
    g->statements.push_back(fresh);
    if (found) {
      *found = uint32_t(g->statements.size() - 1);
    } else {
      g->statement_by_cop.insert(cop, uint32_t(g->statements.size() - 1));
    }
    st = &g->statements.back();
  }
  if (g->on) ++st->count;
  Activation& a = g->stack.back();
  if (st->sub != a.sub || st->parent != a.parent) {
    st->sub = a.sub;
    st->parent = a.parent;
    st->node = NodeIndex(a.parent, FrameIndex(a.sub, st->file, st->line));
  }
  a.node = st->node;
  g->current = st->node;
  if (now > g->flush_deadline) Flush();
}

// The sub an entersub op is about to call, as pp_entersub finds it; nullptr when it is not
// plain (an overloaded object, a name looked up at run time).
CV* CalledSub(pTHX) {
  SV* sv = *PL_stack_sp;
  switch (SvTYPE(sv)) {
    case SVt_PVGV:
      return GvCVu(reinterpret_cast<GV*>(sv));
    case SVt_PVCV:
      return reinterpret_cast<CV*>(sv);
    default:
      if (SvROK(sv) && SvTYPE(SvRV(sv)) == SVt_PVCV) return reinterpret_cast<CV*>(SvRV(sv));
      return nullptr;
  }
}

OP* RunEntersub(pTHX_ OP* op) {
  CV* target = CalledSub(aTHX);
  if (target && CvISXSUB(target)) {
    // An XSUB has run when pp_entersub returns: its time is its own node's.
    uint32_t sub = SubIndex(aTHX_ target);
    if (g->subs[sub].underscore_exit) {
      // The stack holds the arguments, then the sub: the exit code is just below it.
      SV* code = PL_stack_sp > PL_stack_base ? PL_stack_sp[-1] : nullptr;
      Finish(fmt::EndHow::kUnderscoreExit,
             code && SvOK(code) ? uint64_t(IV(SvIV(code))) : uint64_t(0));
      return op->op_ppaddr(aTHX);
    }
    if (g->subs[sub].profiler) {  // start, stop, _finish: their time is nobody's
      Charge(Ticks());
      OP* next = op->op_ppaddr(aTHX);
      if (g && !g->finished) g->last = Ticks();
      return next;
    }
    Charge(Ticks());
    uint32_t caller_node = g->current;
    if (g->on) {
      ++g->calls[{g->stack.back().sub, sub}];
      g->calls_changed = true;
    }
    g->current = NodeIndex(caller_node, g->subs[sub].def_frame);
    OP* next = op->op_ppaddr(aTHX);
    Charge(Ticks());
    g->current = caller_node;
    return next;
  }
  I32 before = cxstack_ix;
  OP* next = op->op_ppaddr(aTHX);
  if (cxstack_ix > before && CxTYPE(&cxstack[cxstack_ix]) == CXt_SUB)
    EnterSub(aTHX_ cxstack[cxstack_ix].blk_sub.cv);
  return next;
}

// `goto &sub` leaves the current sub (its destructor fires) and enters the new one in the same
// context, without entersub: the new sub is entered from the caller of the one that jumped.
OP* RunGoto(pTHX_ OP* op) {
  bool to_sub = op->op_flags & OPf_STACKED;
  OP* next = op->op_ppaddr(aTHX);
  if (to_sub && next && cxstack_ix >= 0) {
    PERL_CONTEXT* cx = &cxstack[cxstack_ix];
    if (CxTYPE(cx) == CXt_SUB && !CvISXSUB(cx->blk_sub.cv) && CvSTART(cx->blk_sub.cv) == next)
      EnterSub(aTHX_ cx->blk_sub.cv);
  }
  return next;
}

int RunOps(pTHX) {
  OP* op = PL_op;
  if (g->active && !g->finished && my_perl == g->interp && op && cxstack_ix >= 0) {
    // call_sv (BEGIN blocks, DESTROY, callbacks from XS code) runs pp_entersub itself and
    // starts this loop at the sub's first op.
    PERL_CONTEXT* cx = &cxstack[cxstack_ix];
    if (CxTYPE(cx) == CXt_SUB && !CxMULTICALL(cx) && CvSTART(cx->blk_sub.cv) == op)
      EnterSub(aTHX_ cx->blk_sub.cv);
  }
  while (op) {
    if (g->active && !g->finished && my_perl == g->interp) {
      switch (op->op_type) {
        case OP_NEXTSTATE:
        case OP_DBSTATE:
          OnStatement(aTHX_ cCOPx(op));
          break;
        case OP_ENTERSUB:
          PL_op = op = RunEntersub(aTHX_ op);
          continue;
        case OP_GOTO:
          PL_op = op = RunGoto(aTHX_ op);
          continue;
        case OP_EXEC:
          Flush();
          break;
        default:
          break;
      }
    }
    PL_op = op = op->op_ppaddr(aTHX);
  }
  PERL_ASYNC_CHECK();
  TAINT_NOT;
  return 0;
}

void Start(pTHX) {
  g = new Profiler;
  g->interp = my_perl;
  g->start_ns = MonotonicNs();
  g->start_ticks = Ticks();
  // Calibrate once so that periodic flushes can be scheduled in ticks (about one a second).
  uint64_t ns0 = MonotonicNs(), t0 = Ticks();
  usleep(2000);
  uint64_t ns1 = MonotonicNs(), t1 = Ticks();
  g->flush_interval_ticks = ns1 > ns0 ? (t1 - t0) * 1000000000ull / (ns1 - ns0) : 3000000000ull;
  g->flush_deadline = Ticks() + g->flush_interval_ticks;
  g->last = Ticks();
  g->subs.push_back(Sub{"main", "", 0, 0, true, false});
  g->stack.push_back(Activation{0, 0, 0});
  g->script = PL_origfilename ? PL_origfilename : "perl";
  if (!BeginFile(g->script.c_str(), false)) return;
  g->active = true;
  // HOTLINE_PERL_START=no: nothing is measured until the program calls Devel::Hotline::start().
  if (const char* start = getenv("HOTLINE_PERL_START"); start && std::strcmp(start, "no") == 0)
    g->on = false;
  std::atexit(FinishAtExit);
  pthread_atfork(nullptr, nullptr, AtForkChild);
  PL_runops = RunOps;
}

XS(Finish_xs) {
  dXSARGS;
  uint64_t status = items > 0 ? uint64_t(SvIV(ST(0))) : 0;
  // In END blocks $? holds the code the program exits with.
  Finish(fmt::EndHow::kExit, status);
  XSRETURN_EMPTY;
}

// Devel::Hotline::start() and stop(): whether it was on before.
XS(Start_xs) {
  dXSARGS;
  PERL_UNUSED_VAR(items);
  bool was = g && g->on;
  if (g && g->active && !g->on) {
    g->last = Ticks();
    g->on = true;
  }
  ST(0) = boolSV(was);
  XSRETURN(1);
}

XS(Stop_xs) {
  dXSARGS;
  PERL_UNUSED_VAR(items);
  bool was = g && g->on;
  if (g && g->active && g->on) {
    Charge(Ticks());
    g->on = false;
  }
  ST(0) = boolSV(was);
  XSRETURN(1);
}

}  // namespace

XS_EXTERNAL(boot_Devel__Hotline) {
  dXSARGS;
  PERL_UNUSED_VAR(items);
  newXS("Devel::Hotline::_finish", Finish_xs, __FILE__);
  newXS("Devel::Hotline::start", Start_xs, __FILE__);
  newXS("Devel::Hotline::stop", Stop_xs, __FILE__);
  if (!g) Start(aTHX);
  XSRETURN_YES;
}

// The profile: hotline's streaming writer fed with frames, stack nodes, samples and counts.
#include <fcntl.h>
#include <link.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "base/loaded_image.h"
#include "profiler.h"

namespace hotline::perl {
namespace {

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
  if (sub.slow_op) r.flags = fmt::kFramePseudo;
  g->writer.add(r);
}

int OnImage(dl_phdr_info* info, size_t, void*) {
  base::LoadedImage image;
  base::DescribeLoadedImage(info, &image);
  if (image.size == 0) return 0;
  for (const NativeModule& m : g->modules)
    if (m.start == image.start && m.size == image.size) return 0;
  const char* name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : nullptr;
  char exe[4096];
  if (!name) {
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    name = exe;
  } else if (std::strncmp(name, "linux-vdso", 10) == 0) {
    name = "[vdso]";
  }
  g->modules.push_back(NativeModule{image.start, image.size, false});
  g->writer.add(
      fmt::ModuleLoadOf(image, MonotonicNs(), g->modules.size(), g->writer.internString(name)));
  return 0;
}

// The images native frames lie in, written before the first stack node that needs them (XS
// modules are loaded while the program runs).
void WriteModules() {
  if (!g->native_unwritten) return;
  g->native_unwritten = false;
  dl_iterate_phdr(OnImage, nullptr);
}

uint64_t WriteNode(uint32_t node_index) {
  Node& n = g->nodes[node_index - 1];
  if (n.writer_id) return n.writer_id;
  uint64_t parent = n.parent ? WriteNode(n.parent) : 0;
  if (n.address) {
    n.writer_id = g->writer.internStackNode(parent, n.address);
    return n.writer_id;
  }
  WriteFrame(n.frame);
  n.writer_id = g->writer.internStackNode(parent, fmt::kNamedFrameTag | n.frame);
  return n.writer_id;
}

// A sub's id in TRACE_FUNCTION and CALL_COUNTS is its index + 1: 0 there means no caller.
void WriteTraceFunction(uint32_t sub_index) {
  Sub& sub = g->subs[sub_index];
  if (sub.trace_written) return;
  sub.trace_written = true;
  WriteFrame(sub.def_frame);
  g->writer.add(fmt::TraceFunctionRecord{sub_index + 1, fmt::kNamedFrameTag | sub.def_frame});
}

uint64_t Tid() { return uint64_t(syscall(SYS_gettid)); }

uint64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// Writes what accumulated since the last flush: samples (exclusive ns per node), line counts,
// call counts. Each is a delta: records of several flushes add up.
void WriteAccumulated(ThreadState* t, uint64_t now_ticks, uint64_t now_ns) {
  WriteModules();
  for (uint32_t i = 1; i <= t->ticks.size(); ++i) {
    uint64_t& ticks = t->ticks[i - 1];
    if (!ticks) continue;
    uint64_t ns = TicksToNs(ticks, now_ticks, now_ns);
    ticks = 0;
    if (!ns) continue;
    fmt::SampleRecord s;
    s.time = now_ns;
    s.tid = t->tid;
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
  if (t->calls_changed) {
    t->calls_changed = false;
    std::vector<uint64_t> triples;
    if (t == &g->main_thread) {
      // The main program runs once, called by nobody: its calls are exact edges too.
      WriteTraceFunction(0);
      triples.insert(triples.end(), {0, 1, 1});
    }
    for (auto& [edge, count] : t->calls) {
      // An ithread's first sub is called by the thread's start, not by the main program.
      bool thread_entry = edge.first == 0 && t != &g->main_thread;
      if (!thread_entry) WriteTraceFunction(uint32_t(edge.first));
      WriteTraceFunction(uint32_t(edge.second));
      triples.insert(triples.end(), {thread_entry ? 0 : edge.first + 1, edge.second + 1, count});
    }
    fmt::CallCountsRecord r;
    r.time = now_ns;
    r.tid = t->tid;
    r.max_depth = t->max_depth;
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

}  // namespace

void WriteSample(uint32_t node, uint64_t weight) {
  WriteModules();
  fmt::SampleRecord s;
  s.time = MonotonicNs();
  s.tid = Tid();
  s.node = WriteNode(node);
  s.weight = weight;
  g->writer.add(s);
}

bool BeginFile(const char* script, bool child) {
  g->fd = OpenOutput(script, child);
  if (g->fd < 0) {
    std::fprintf(stderr, "Devel::Hotline: cannot write %s: %s: the program runs unprofiled\n",
                 g->output.c_str(), std::strerror(errno));
    return false;
  }
  g->writer.begin(g->fd, g->sampling
                             ? fmt::kFeatureSamples
                             : fmt::kFeatureSamples | fmt::kFeatureTrace | fmt::kFeatureLineCounts);
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
  // Exact mode measures elapsed time between statements; sampling counts CPU-time ticks.
  p.clock = g->sampling ? fmt::ClockMode::kCpu : fmt::ClockMode::kWall;
  p.sampler = g->sampling ? g->sampler_kind : fmt::Sampler::kNone;
  p.period_ns = g->sampling ? g->period_ns : 1;
  p.flags = child ? uint64_t(fmt::kForkedChild) : 0;
  p.trace = g->sampling ? fmt::TraceMode::kNone : fmt::TraceMode::kCounts;
  g->writer.add(p);
  g->writer.add(fmt::ThreadStartRecord{g->start_ns, Tid(), 0, 0});
  g->writer.flush();
  return true;
}
void Flush(ThreadState* t) {
  uint64_t now = Ticks();
  Charge(t, now);
  WriteAccumulated(t, now, MonotonicNs());
  g->writer.flush();
  t->flush_deadline = Ticks() + g->flush_interval_ticks;
}

void InitThreadState(ThreadState* t, PerlInterpreter* interp) {
  t->interp = interp;
  t->tid = Tid();
  t->stack.assign(1, Activation{0, 0, 0});
  t->last = Ticks();
  t->flush_deadline = t->last + g->flush_interval_ticks;
}

ThreadState* NewThreadState(pTHX) {
  // Another interpreter without a CLONE seen first (an embedder's): lock from now on.
  g->multi = true;
  thread_local ThreadState* cached = nullptr;
  if (cached && cached->interp == my_perl) return cached;
  Shared shared;
  uint64_t tid = Tid();
  for (ThreadState* t : g->threads)
    if (t->interp == my_perl && t->tid == tid && !t->ended) return cached = t;
  auto* t = new ThreadState;
  InitThreadState(t, my_perl);
  t->on = g->main_thread.on && !g->start_phase;
  g->threads.push_back(t);
  if (g->active && !g->finished) g->writer.add(fmt::ThreadStartRecord{MonotonicNs(), t->tid, 0, 0});
  pthread_setspecific(g->thread_key, t);
  return cached = t;
}

void EndThread(void* state) {
  auto* t = static_cast<ThreadState*>(state);
  Shared shared;
  if (t->ended) return;
  t->ended = true;
  t->interp = nullptr;
  if (!g->active || g->finished) return;
  uint64_t now = Ticks();
  Charge(t, now);
  uint64_t now_ns = MonotonicNs();
  WriteAccumulated(t, now, now_ns);
  g->writer.add(fmt::ThreadEndRecord{now_ns, t->tid, ThreadCpuNs()});
  g->writer.flush();
}

void Finish(fmt::EndHow how, uint64_t code) {
  if (!g) return;
  // The program is on its way out because of a signal that came after its last statement.
  if (int sig = g_fatal_signal.load(); sig && how == fmt::EndHow::kExit)
    how = fmt::EndHow::kSignal, code = uint64_t(sig);
  Shared shared;
  if (!g->active || g->finished) return;
  g->finished = true;
  uint64_t now = Ticks();
  uint64_t now_ns = MonotonicNs();
  // ithreads still running at the end: what they measured so far (their CPU time unknown).
  for (ThreadState* t : g->threads) {
    if (t->ended) continue;
    WriteAccumulated(t, now, now_ns);
    g->writer.add(fmt::ThreadEndRecord{now_ns, t->tid, fmt::kCpuUnknown});
  }
  ThreadState* main = &g->main_thread;
  if (!main->ended) {
    Charge(main, now);
    WriteAccumulated(main, now, now_ns);
    g->writer.add(fmt::ThreadEndRecord{now_ns, main->tid,
                                       g->threads.empty() ? ProcessCpuNs() : ThreadCpuNs()});
  }
  g->writer.add(fmt::EndRecord{now_ns, how, code});
  g->writer.flush();
  if (g->writer.failed())
    std::fprintf(stderr, "Devel::Hotline: writing %s failed: %s\n", g->output.c_str(),
                 g->writer.error());
  close(g->fd);
  g->fd = -1;
}

// A fatal signal that came after the last statement (perl was leaving) still ends the program
// as the signal would have.
void FinishAtExit() {
  if (g_fatal_signal.load()) TakeFatalSignal();
  Finish(fmt::EndHow::kExit, 0);
}

// A forked child profiles itself into a file of its own; what the parent measured stays in
// the parent's profile. Only the thread that forked lives on in the child.
void AtForkChild() {
  if (!g || !g->active || g->finished) return;
  new (&g->mutex) std::recursive_mutex;  // another thread may have held it at the fork
  if (g->fd >= 0) close(g->fd);
  g->writer.reset();
  for (Frame& f : g->frames) f.written = false;
  for (Node& n : g->nodes) n.writer_id = 0;
  for (Statement& s : g->statements) s.count = s.written = 0;
  for (Sub& s : g->subs) s.trace_written = false;
  for (SourceFile& f : g->files) f.text_written = false;
  // The forking thread's interpreter is the one perl has for this thread.
  auto* forker = static_cast<PerlInterpreter*>(PERL_GET_THX);
  std::vector<ThreadState*> all(g->threads);
  all.push_back(&g->main_thread);
  for (ThreadState* t : all) {
    t->ticks.clear();
    t->calls.clear();
    t->calls_changed = false;
    if (t->interp == forker) {
      t->tid = Tid();
    } else {
      t->ended = true;
    }
  }
  g->modules.clear();
  g->native_unwritten = true;
  g->fd = -1;
  g->active = false;
  g->child_pending = true;
  if (g->sampling) RearmSamplingTimerInChild();
}

void BeginForkedChild() {
  g->child_pending = false;
  g->start_ticks = Ticks();
  g->start_ns = MonotonicNs();
  g->main_thread.last = g->start_ticks;
  g->active = BeginFile(g->script.c_str(), true);
}

}  // namespace hotline::perl

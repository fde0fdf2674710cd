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
  fmt::ModuleLoadRecord r;
  r.time = MonotonicNs();
  r.id = g->modules.size();
  r.path = g->writer.internString(name);
  r.bias = image.bias;
  r.start = image.start;
  r.size = image.size;
  r.file_offset = image.file_offset;
  r.build_id = image.build_id;
  r.build_id_size = image.build_id_size;
  g->writer.add(r);
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
  WriteModules();
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
  g->last = g->start_ticks;
  g->active = BeginFile(g->script.c_str(), true);
}

}  // namespace hotline::perl

// The hook library of hotline's profiling pdfTeX (docs/tex.md), with texprof's semantics.
//
// TeX's main_control runs one command per "slot": get_x_token (expanding macros as it goes)
// then the command. One rdtsc per slot, at big_switch, charges the time since the previous
// read to the slot labelled last: its command, the file and line its token came from (a macro
// body's tokens: the macro's definition line) and the stack of macros, \everypar-style hooks and
// \input files that produced it.
//
// Its parts: this file starts and ends the run and holds its one Profiler (hooks_internal.h);
// slots.cc charges the slots; macro_stack.cc keeps the logical stack and makes the frames and
// stack nodes it resolves to; def_sites.cc records where token lists were defined and carries a
// format's sites to the runs that load it; profile_writer.cc writes the profile; tables.h and
// tables.cc are the lookup tables beneath them.
#include "hotline_tex.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "hooks_internal.h"

int hltex_active = 0;
uint64_t hltex_tokens = 0;

namespace hotline::tex {

Profiler* g = nullptr;

namespace {

void FinishAtExit() { Finish(0); }

}  // namespace
}  // namespace hotline::tex

using namespace hotline::tex;

extern "C" {

void hltex_start(int argc, char** argv) {
  const char* output = getenv("HOTLINE_TEX_OUTPUT");
  if (!output || !*output || g) return;
  g = new Profiler;
  g->output = output;
  const char* cost = getenv("HOTLINE_TEX_COST");
  g->tokens_cost = cost && std::strcmp(cost, "tokens") == 0;
  const char* start = getenv("HOTLINE_TEX_START");
  g->on = !(start && std::strcmp(start, "no") == 0);
  g->fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (g->fd < 0) {
    std::fprintf(stderr, "hotline tex: cannot write %s: %s\n", output, std::strerror(errno));
    return;
  }
  g->start_ns = ClockNs(CLOCK_MONOTONIC);
  g->start_ticks = __rdtsc();
  uint64_t ns0 = ClockNs(CLOCK_MONOTONIC), t0 = __rdtsc();
  usleep(2000);
  uint64_t ns1 = ClockNs(CLOCK_MONOTONIC), t1 = __rdtsc();
  g->flush_interval = ns1 > ns0 ? (t1 - t0) * 1000000000ull / (ns1 - ns0) : 3000000000ull;
  g->flush_deadline = __rdtsc() + g->flush_interval;

  if (!g->writer.begin(g->fd,
                       fmt::kFeatureSamples | fmt::kFeatureTrace | fmt::kFeatureLineCounts)) {
    std::fprintf(stderr, "hotline tex: cannot write %s: %s\n", output, g->writer.error());
    close(g->fd);
    return;
  }
  std::vector<uint64_t> args;
  for (int i = 0; i < argc; ++i) args.push_back(g->writer.internString(argv[i]));
  fmt::ProcessRecord p;
  p.pid = uint64_t(getpid());
  p.ppid = uint64_t(getppid());
  timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  p.realtime_ns = uint64_t(rt.tv_sec) * 1000000000u + uint64_t(rt.tv_nsec);
  p.time = g->start_ns;
  p.exe = g->writer.internString(argc > 0 ? argv[0] : "pdftex");
  p.argc = args.size();
  p.argv = args.data();
  p.clock = fmt::ClockMode::kCpu;
  p.sampler = fmt::Sampler::kNone;
  p.period_ns = 1;
  p.flags = g->on ? 0 : uint64_t(fmt::kStartedPaused);
  p.trace = fmt::TraceMode::kCounts;
  g->writer.add(p);
  g->writer.add(fmt::ThreadStartRecord{g->start_ns, Tid(), 0, 0});
  if (g->tokens_cost)
    g->writer.add(fmt::NoteRecord{g->start_ns,
                                  "cost tokens: every nanosecond in this profile is one token "
                                  "TeX read or one command it ran, not time"});
  g->writer.flush();

  // Room reserved, not touched: the kernel gives the pages as they fill, and the tables never
  // copy themselves to grow in all but the largest runs.
  g->nodes.reserve(size_t(1) << 20);
  g->node_totals.reserve(size_t(1) << 20);
  g->frames.reserve(size_t(1) << 18);
  g->funcs.reserve(size_t(1) << 18);
  g->call_triples.reserve(size_t(3) << 18);
  g->terminal_file = FileId("(terminal)");
  g->pseudo_file = FileId("(scantokens)");
  g->unknown_file = FileId("(unknown)");
  g->root_func = FuncId("(tex)", g->terminal_file, 0);
  g->root_node = NodeId(0, DefFrame(g->root_func));
  // Until the first command: TeX's start (the format, kpathsea's file database), TeX's own.
  // The run is one call of the root, which calls initialize once: exact counts, as a macro's.
  CountCall(g->root_func);
  uint32_t initialize = FuncId("initialize", FileId("system initialize"), 0);
  CountCall(initialize);
  g->current = NodeId(g->root_node, DefFrame(initialize));
  g->current_cmd = kCommandPhase;
  g->last = Now();
  // Slots of more than 200 µs are checked against the CPU clock (OnCpuPart).
  g->ticks_per_s = g->flush_interval;
  g->cpu_check_ticks = g->tokens_cost ? UINT64_MAX : g->ticks_per_s / 5000;
  g->cpu_at_check = ClockNs(CLOCK_THREAD_CPUTIME_ID);
  hltex_active = 1;
  std::atexit(FinishAtExit);
}

void hltex_finish(int exit_code) {
  if (!hltex_active) return;
  Finish(uint64_t(exit_code));
}

}  // extern "C"

// Devel::Hotline's XS part: a statement-level profiler for perl that writes hotline profiles
// (docs/perl.md). This file starts it and holds the subs Perl sees; exact.cc measures every
// statement, sampling.cc samples, output.cc writes the profile.
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "profiler.h"

namespace hotline::perl {
Profiler* g = nullptr;
}  // namespace hotline::perl

namespace {

using namespace hotline::perl;

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
  // HOTLINE_PERL_SAMPLE=NS (`hotline record --perl-sample`): one sample per NS of CPU time.
  uint64_t period_ns = 0;
  if (const char* sample = getenv("HOTLINE_PERL_SAMPLE"); sample && *sample)
    period_ns = std::strtoull(sample, nullptr, 10);
  g->sampling = period_ns > 0;
  if (g->sampling && !StartSampling(aTHX_ period_ns)) {
    std::fprintf(stderr,
                 "Devel::Hotline: cannot arm a CPU-time clock for sampling (%s): every statement "
                 "is measured instead\n",
                 std::strerror(errno));
    g->sampling = false;
  }
  if (!BeginFile(g->script.c_str(), false)) {
    if (g->sampling) StopSamplingTimer();
    return;
  }
  g->active = true;
  // HOTLINE_PERL_START (NYTProf's start=): begin (the default) measures from the module's load;
  // init and end from the start of that phase; no until the program calls start().
  if (const char* start = getenv("HOTLINE_PERL_START"); start && *start) {
    if (std::strcmp(start, "no") == 0) {
      g->on = false;
    } else if (std::strcmp(start, "init") == 0) {
      g->on = false;
      g->start_phase = PERL_PHASE_INIT;
    } else if (std::strcmp(start, "end") == 0) {
      g->on = false;
      g->start_phase = PERL_PHASE_END;
    } else if (std::strcmp(start, "begin") != 0) {
      std::fprintf(stderr,
                   "Devel::Hotline: HOTLINE_PERL_START=%s: expected begin, init, end or no; "
                   "measuring from the start\n",
                   start);
    }
  }
  std::atexit(FinishAtExit);
  pthread_atfork(nullptr, nullptr, AtForkChild);
  if (g->sampling) {
    PL_runops = RunOpsSampling;
    return;
  }
  PL_runops = RunOpsExact;
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

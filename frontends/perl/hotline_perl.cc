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
  // The main program, sub 0, with a definition frame of its own so that its calls are edges.
  g->subs.push_back(Sub{"main", "", 0, 1, false, false});
  g->frames.push_back(Frame{0, UINT32_MAX, 0, false});
  InitThreadState(&g->main_thread, my_perl);
  pthread_key_create(&g->thread_key, EndThread);
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
      g->main_thread.on = false;
    } else if (std::strcmp(start, "init") == 0) {
      g->main_thread.on = false;
      g->start_phase = PERL_PHASE_INIT;
    } else if (std::strcmp(start, "end") == 0) {
      g->main_thread.on = false;
      g->start_phase = PERL_PHASE_END;
    } else if (std::strcmp(start, "begin") != 0) {
      std::fprintf(stderr,
                   "Devel::Hotline: HOTLINE_PERL_START=%s: expected begin, init, end or no; "
                   "measuring from the start\n",
                   start);
    }
  }
  std::atexit(FinishAtExit);
  InstallFatalHandlers();
  pthread_atfork(nullptr, nullptr, AtForkChild);
  if (g->sampling) return;  // perl's own runops loop; sampling.cc wraps its statement ops
  PL_runops = RunOpsExact;
  WatchOps();
}

XS(Finish_xs) {
  dXSARGS;
  uint64_t status = items > 0 ? uint64_t(SvIV(ST(0))) : 0;
  // In END blocks $? holds the code the program exits with.
  Finish(fmt::EndHow::kExit, status);
  XSRETURN_EMPTY;
}

// Devel::Hotline::start() and stop(), for the calling thread: whether it was on before.
XS(Start_xs) {
  dXSARGS;
  PERL_UNUSED_VAR(items);
  bool was = false;
  if (g && g->active && !g->finished) {
    Shared shared;
    ThreadState* t = StateFor(aTHX);
    was = t->on;
    if (!t->on) {
      t->last = Ticks();
      t->on = true;
    }
  }
  ST(0) = boolSV(was);
  XSRETURN(1);
}

XS(Stop_xs) {
  dXSARGS;
  PERL_UNUSED_VAR(items);
  bool was = false;
  if (g && g->active && !g->finished) {
    Shared shared;
    ThreadState* t = StateFor(aTHX);
    was = t->on;
    if (t->on) {
      Charge(t, Ticks());
      t->on = false;
    }
  }
  ST(0) = boolSV(was);
  XSRETURN(1);
}

// Devel::Hotline->CLONE: perl calls it while it clones an interpreter for a new ithread, in
// the creating thread, before the new one runs: from here on the shared state is locked. An
// XSUB, so that no Perl code of the new interpreter runs in the creating thread.
XS(Clone_xs) {
  dXSARGS;
  PERL_UNUSED_VAR(items);
  if (g) g->multi = true;
  XSRETURN_EMPTY;
}

}  // namespace

XS_EXTERNAL(boot_Devel__Hotline) {
  dXSARGS;
  PERL_UNUSED_VAR(items);
  newXS("Devel::Hotline::_finish", Finish_xs, __FILE__);
  newXS("Devel::Hotline::start", Start_xs, __FILE__);
  newXS("Devel::Hotline::stop", Stop_xs, __FILE__);
  newXS("Devel::Hotline::CLONE", Clone_xs, __FILE__);
  if (!g) Start(aTHX);
  XSRETURN_YES;
}

// Exact mode: a runops loop that notes each statement (nextstate / dbstate) before it runs and
// each sub call (entersub). One rdtsc per statement; time runs from the start of one statement
// to the start of the next (NYTProf's rule) and goes to the node that was current.
#include "profiler.h"

namespace hotline::perl {
namespace {

void OnSubExit(pTHX_ void* depth) {
  Shared shared;
  if (!g->active || g->finished) return;
  ThreadState* t = StateFor(aTHX);
  size_t keep = size_t(uintptr_t(depth));
  if (t->stack.size() <= keep || keep == 0) return;
  Charge(t, Ticks());
  // Leaving one of the profiler's own subs: measuring resumes as it was before it.
  for (size_t i = keep; i < t->stack.size(); ++i)
    if (t->stack[i].profiler) {
      if (t->stack[i].resume) t->last = Ticks();
      t->on = t->stack[i].resume;
      break;
    }
  t->stack.resize(keep);
  t->current = t->stack.back().node;
}

// What died since the last event: timed calls (XSUBs, slow ops) that an exception left are
// taken off the stack, and a call of a sub that does not exist is counted.
void SettleDeathsSlow(pTHX_ ThreadState* t) {
  if (t->undefined_pending) {
    if (t->on) {
      ++t->calls[{t->undefined_caller, UndefinedSubIndex(t->undefined_callee)}];
      t->calls_changed = true;
    }
    t->undefined_pending = false;
  }
  size_t keep = t->stack.size();
  while (keep > 1 && t->stack[keep - 1].timed_cx >= 0 && cxstack_ix < t->stack[keep - 1].timed_cx)
    --keep;
  if (keep == t->stack.size()) return;
  t->current = t->stack[keep].parent;
  t->stack.resize(keep);
}

inline void SettleDeaths(pTHX_ ThreadState* t) {
  if (__builtin_expect(t->undefined_pending || t->stack.back().timed_cx >= 0, 0))
    SettleDeathsSlow(aTHX_ t);
}

// A Perl sub has just been entered (its context is on top): from here to its exit, whichever
// way it leaves, its statements are its own.
void EnterSub(pTHX_ ThreadState* t, CV* cv) {
  Shared shared;
  Charge(t, Ticks());
  SettleDeaths(aTHX_ t);
  uint32_t callee = SubIndex(aTHX_ cv);
  uint32_t caller = t->stack.back().sub;
  bool profiler = g->subs[callee].profiler;
  if (t->on && !profiler) {
    ++t->calls[{caller, callee}];
    t->calls_changed = true;
  }
  t->stack.push_back(Activation{callee, t->current, t->current, profiler, t->on});
  if (profiler) t->on = false;
  if (t->stack.size() - 1 > t->max_depth) t->max_depth = t->stack.size() - 1;
  SAVEDESTRUCTOR_X(OnSubExit, reinterpret_cast<void*>(uintptr_t(t->stack.size() - 1)));
}

// The statement `st` runs now: counted, and its node charged from here on.
void OnKnownStatement(pTHX_ ThreadState* t, Statement* st, uint64_t now) {
  if (t->on) ++st->count;
  Activation& a = t->stack.back();
  if (st->sub != a.sub) {
    st->frame = FrameIndex(a.sub, st->file, st->line);
    st->sub = a.sub;
    st->parent = UINT32_MAX;
    std::fill(std::begin(st->other_parent), std::end(st->other_parent), UINT32_MAX);
  }
  if (st->parent != a.parent) {
    // The current node moves to the front of the others; the oldest other is dropped.
    uint32_t parent = st->parent, node = st->node;
    int i = 0;
    while (i < Statement::kOtherParents - 1 && st->other_parent[i] != a.parent) ++i;
    bool known = st->other_parent[i] == a.parent;
    st->node = known ? st->other_node[i] : NodeIndex(a.parent, st->frame);
    st->parent = a.parent;
    for (; i > 0; --i) {
      st->other_parent[i] = st->other_parent[i - 1];
      st->other_node[i] = st->other_node[i - 1];
    }
    st->other_parent[0] = parent;
    st->other_node[0] = node;
  }
  t->statement = uint32_t(st - g->statements.data());
  a.node = st->node;
  t->current = st->node;
  if (now > t->flush_deadline) Flush(t);
}

void OnStatement(pTHX_ ThreadState* t, COP* cop) {
  Shared shared;
  uint64_t now = Ticks();
  Charge(t, now);
  SettleDeaths(aTHX_ t);
  StartAtPhase(aTHX_ t, now);
  // The statements last run, by a hash of their COP: a loop's find theirs in a cache line
  // that stays near, where the whole table (a slot per COP the program ever ran) does not.
  Profiler::RecentStatement& recent =
      g->recent_statements[(uintptr_t(cop) >> 3) * 0x9E3779B97F4A7C15ull >>
                           (64 - Profiler::kRecentStatementBits)];
  if (recent.cop == cop && g->statements[recent.index].seq == cop->cop_seq) {
    OnKnownStatement(aTHX_ t, &g->statements[recent.index], now);
    return;
  }
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
  recent = Profiler::RecentStatement{cop, uint32_t(st - g->statements.data())};
  OnKnownStatement(aTHX_ t, st, now);
}

// The sub the entersub op is about to call, as pp_entersub finds it; nullptr when it is not
// plain (an overloaded object, a scalar with get-magic, an undefined name).
CV* CalledSub(pTHX_ const OP* entersub) {
  SV* sv = *PL_stack_sp;
  switch (SvTYPE(sv)) {
    case SVt_PVGV:
      return GvCVu(reinterpret_cast<GV*>(sv));
    case SVt_PVCV:
      return reinterpret_cast<CV*>(sv);
    default:
      if (SvROK(sv))
        return SvTYPE(SvRV(sv)) == SVt_PVCV ? reinterpret_cast<CV*>(SvRV(sv)) : nullptr;
      // &$name: looked up by name (without adding it; under strict refs perl dies instead).
      if (SvPOK(sv) && !SvGMAGICAL(sv) && !(entersub->op_private & HINT_STRICT_REFS)) {
        STRLEN len;
        const char* name = SvPV_nomg_const(sv, len);
        return get_cvn_flags(name, len, SvUTF8(sv));
      }
      return nullptr;
  }
}

// Runs `op` as a call of `sub` from the current sub: an XSUB (it has run when pp_entersub
// returns) or a slow op timed as NYTProf's CORE: subs are. The time is the callee's own node's,
// and so are the statements and calls of the code it calls back (a sort block's calls are
// CORE:sort's, as NYTProf has them). An exception that leaves it is noticed at the next event.
OP* RunTimedAsSub(pTHX_ ThreadState* t, OP* op, uint32_t sub, Perl_ppaddr_t run = nullptr) {
  uint32_t caller_node;
  size_t depth;
  {
    Shared shared;
    Charge(t, Ticks());
    SettleDeaths(aTHX_ t);
    caller_node = t->current;
    if (t->on) {
      ++t->calls[{t->stack.back().sub, sub}];
      t->calls_changed = true;
    }
    depth = t->stack.size();
    uint32_t node;
    Statement* st = t->statement < g->statements.size() ? &g->statements[t->statement] : nullptr;
    if (st && st->timed_caller == caller_node && st->timed_sub == sub) {
      node = st->timed_node;
    } else {
      node = NodeIndex(caller_node, g->subs[sub].def_frame);
      if (st) st->timed_caller = caller_node, st->timed_sub = sub, st->timed_node = node;
    }
    t->stack.push_back(Activation{sub, caller_node, node, false, false, int32_t(cxstack_ix)});
    t->current = node;
  }
  OP* next = run ? run(aTHX) : op->op_ppaddr(aTHX);
  Shared shared;
  if (g->finished) return next;
  Charge(t, Ticks());
  if (t->stack.size() > depth) t->stack.resize(depth);
  t->current = caller_node;
  return next;
}

// The ops NYTProf times as `CORE:` subs by default (slowops=2), as Devel::NYTProf 6.12 reports
// them on a script that runs every builtin: regular expressions (with s///e's substcont),
// sort, pack and unpack, crypt, and those that wait for the system (I/O, formats, files and
// their tests, directories, processes, sockets, the system databases). Not pipe, socketpair,
// fork or kill, which it does not time either.
bool IsSlowOp(unsigned type) {
  switch (type) {
    case OP_MATCH:
    case OP_SUBST:
    case OP_SUBSTCONT:
    case OP_QR:
    case OP_REGCOMP:
    case OP_SORT:
    case OP_PACK:
    case OP_UNPACK:
    case OP_CRYPT:
    case OP_PRINT:
    case OP_PRTF:
    case OP_SAY:
    case OP_ENTERWRITE:
    case OP_LEAVEWRITE:
    case OP_READLINE:
    case OP_RCATLINE:
    case OP_GETC:
    case OP_READ:
    case OP_SYSREAD:
    case OP_SYSWRITE:
    case OP_SEND:
    case OP_RECV:
    case OP_EOF:
    case OP_TELL:
    case OP_SEEK:
    case OP_SYSSEEK:
    case OP_TRUNCATE:
    case OP_OPEN:
    case OP_SYSOPEN:
    case OP_CLOSE:
    case OP_BINMODE:
    case OP_FCNTL:
    case OP_IOCTL:
    case OP_FLOCK:
    case OP_SELECT:
    case OP_SSELECT:
    case OP_DBMOPEN:
    case OP_DBMCLOSE:
    case OP_OPEN_DIR:
    case OP_READDIR:
    case OP_TELLDIR:
    case OP_SEEKDIR:
    case OP_REWINDDIR:
    case OP_CLOSEDIR:
    case OP_MKDIR:
    case OP_RMDIR:
    case OP_CHDIR:
    case OP_UNLINK:
    case OP_RENAME:
    case OP_LINK:
    case OP_SYMLINK:
    case OP_READLINK:
    case OP_CHMOD:
    case OP_CHOWN:
    case OP_UTIME:
    case OP_UMASK:
    case OP_GLOB:
    case OP_STAT:
    case OP_LSTAT:
    case OP_FTRREAD:
    case OP_FTRWRITE:
    case OP_FTREXEC:
    case OP_FTEREAD:
    case OP_FTEWRITE:
    case OP_FTEEXEC:
    case OP_FTIS:
    case OP_FTSIZE:
    case OP_FTMTIME:
    case OP_FTATIME:
    case OP_FTCTIME:
    case OP_FTROWNED:
    case OP_FTEOWNED:
    case OP_FTZERO:
    case OP_FTSOCK:
    case OP_FTCHR:
    case OP_FTBLK:
    case OP_FTFILE:
    case OP_FTDIR:
    case OP_FTPIPE:
    case OP_FTSUID:
    case OP_FTSGID:
    case OP_FTSVTX:
    case OP_FTLINK:
    case OP_FTTTY:
    case OP_FTTEXT:
    case OP_FTBINARY:
    case OP_SYSTEM:
    case OP_BACKTICK:
    case OP_WAIT:
    case OP_WAITPID:
    case OP_SLEEP:
    case OP_SOCKET:
    case OP_BIND:
    case OP_CONNECT:
    case OP_LISTEN:
    case OP_ACCEPT:
    case OP_SHUTDOWN:
    case OP_GSOCKOPT:
    case OP_SSOCKOPT:
    case OP_GETSOCKNAME:
    case OP_GETPEERNAME:
    case OP_GHBYNAME:
    case OP_GHBYADDR:
    case OP_GHOSTENT:
    case OP_GNBYNAME:
    case OP_GNBYADDR:
    case OP_GNETENT:
    case OP_GPBYNAME:
    case OP_GPBYNUMBER:
    case OP_GPROTOENT:
    case OP_GSBYNAME:
    case OP_GSBYPORT:
    case OP_GSERVENT:
    case OP_SHOSTENT:
    case OP_SNETENT:
    case OP_SPROTOENT:
    case OP_SSERVENT:
    case OP_EHOSTENT:
    case OP_ENETENT:
    case OP_EPROTOENT:
    case OP_ESERVENT:
    case OP_GPWNAM:
    case OP_GPWUID:
    case OP_GPWENT:
    case OP_SPWENT:
    case OP_EPWENT:
    case OP_GGRNAM:
    case OP_GGRGID:
    case OP_GGRENT:
    case OP_SGRENT:
    case OP_EGRENT:
    case OP_GETLOGIN:
      return true;
    default:
      return false;
  }
}

uint32_t SlowOpSubShared(pTHX_ unsigned op_type) {
  Shared shared;
  return SlowOpSub(aTHX_ op_type);
}

std::string GvFullName(GV* gv) {
  return PackageName(GvSTASH(gv)) + "::" + std::string(GvNAME(gv), GvNAMELEN(gv));
}

// An entersub of a sub that is not there: a stub (declared, no body: Fcntl's constants the
// system lacks), a GV without a sub, or a name in a string under `no strict 'refs'` that finds
// none. Perl dies on it in entersub, unless an AUTOLOAD answers (then entersub returns and
// nothing is counted here).
void NoteUndefinedCallee(pTHX_ ThreadState* t, const OP* entersub, CV* stub) {
  SV* called = *PL_stack_sp;
  std::string name;
  if (stub) {
    if (!CvGV(stub)) return;
    name = GvFullName(CvGV(stub));
  } else if (SvTYPE(called) == SVt_PVGV && !GvCVu(reinterpret_cast<GV*>(called))) {
    name = GvFullName(reinterpret_cast<GV*>(called));
  } else if (SvPOK(called) && !SvROK(called) && !SvGMAGICAL(called) &&
             !(entersub->op_private & HINT_STRICT_REFS)) {
    STRLEN len;
    const char* text = SvPV_nomg_const(called, len);
    name.assign(text, len);
    if (name.find("::") == std::string::npos && name.find('\'') == std::string::npos) {
      HV* stash = CopSTASH(PL_curcop);
      name = PackageName(stash) + "::" + name;
    } else if (name.rfind("::", 0) == 0) {
      name = "main" + name;
    }
  } else {
    return;
  }
  t->undefined_pending = true;
  t->undefined_caller = t->stack.back().sub;
  t->undefined_callee = std::move(name);
}

Perl_ppaddr_t g_pp_perl[OP_max];  // perl's own functions of the ops watched

// The state of a thread measuring an op that is not the runops loop's to run (else null).
ThreadState* NotOurs(pTHX) {
  ThreadState* t = g->active && !g->finished ? StateFor(aTHX) : nullptr;
  if (t && t->op_ours) {
    t->op_ours = false;
    return nullptr;
  }
  return t;
}

// PL_ppaddr[OP_ENTERSUB] while measuring, so the entersub ops compiled since, and the calls
// perl makes itself (call_sv, an overloaded operator: version objects' `(cmp`, a tie or
// DESTROY method, a callback from XS), all come here. A Perl sub that perl calls itself starts
// the runops loop, which sees it; an XSUB runs here and nowhere else, and is measured here.
OP* WatchEntersub(pTHX) {
  Perl_ppaddr_t perl = g_pp_perl[OP_ENTERSUB];
  ThreadState* t = NotOurs(aTHX);
  if (!t) return perl(aTHX);
  CV* target = CalledSub(aTHX_ PL_op);
  if (!target || !CvISXSUB(target)) return perl(aTHX);
  uint32_t sub;
  {
    Shared shared;
    sub = SubIndex(aTHX_ target);
    if (g->subs[sub].profiler || g->subs[sub].underscore_exit) return perl(aTHX);
  }
  return RunTimedAsSub(aTHX_ t, PL_op, sub, perl);
}

// PL_ppaddr of each slow op while measuring: one that XS code runs itself (IO::Handle's
// getline runs readline) is timed as one the runops loop runs.
OP* WatchSlowOp(pTHX) {
  unsigned type = PL_op->op_type;
  ThreadState* t = NotOurs(aTHX);
  if (!t) return g_pp_perl[type](aTHX);
  return RunTimedAsSub(aTHX_ t, PL_op, SlowOpSubShared(aTHX_ type), g_pp_perl[type]);
}

OP* RunEntersub(pTHX_ ThreadState* t, OP* op) {
  // Whichever way below, the op's function runs next, for this call.
  t->op_ours = op->op_ppaddr == WatchEntersub;
  CV* target = CalledSub(aTHX_ op);
  if (target && CvISXSUB(target)) {
    // An XSUB has run when pp_entersub returns: its time is its own node's.
    uint32_t sub;
    bool underscore_exit, profiler;
    {
      Shared shared;
      sub = SubIndex(aTHX_ target);
      underscore_exit = g->subs[sub].underscore_exit;
      profiler = g->subs[sub].profiler;
      if (profiler) Charge(t, Ticks());
    }
    if (underscore_exit) {
      // The stack holds the arguments, then the sub: the exit code is just below it.
      SV* code = PL_stack_sp > PL_stack_base ? PL_stack_sp[-1] : nullptr;
      Finish(fmt::EndHow::kUnderscoreExit,
             code && SvOK(code) ? uint64_t(IV(SvIV(code))) : uint64_t(0));
      return op->op_ppaddr(aTHX);
    }
    if (profiler) {  // start, stop, _finish: their time is nobody's
      OP* next = op->op_ppaddr(aTHX);
      if (g && !g->finished) t->last = Ticks();
      return next;
    }
    return RunTimedAsSub(aTHX_ t, op, sub);
  }
  {
    // Before entersub pushes the callee's context where a context an exception left was.
    Shared shared;
    SettleDeaths(aTHX_ t);
  }
  if (!target || (!CvROOT(target) && !CvISXSUB(target))) NoteUndefinedCallee(aTHX_ t, op, target);
  I32 before = cxstack_ix;
  OP* next = op->op_ppaddr(aTHX);
  t->undefined_pending = false;
  if (cxstack_ix > before && CxTYPE(&cxstack[cxstack_ix]) == CXt_SUB)
    EnterSub(aTHX_ t, cxstack[cxstack_ix].blk_sub.cv);
  return next;
}

// `goto &sub` leaves the current sub (its destructor fires) and enters the new one in the same
// context, without entersub: the new sub is entered from the caller of the one that jumped.
OP* RunGoto(pTHX_ ThreadState* t, OP* op) {
  bool to_sub = op->op_flags & OPf_STACKED;
  SV* target = to_sub ? *PL_stack_sp : nullptr;
  if (target && SvROK(target) && SvTYPE(SvRV(target)) == SVt_PVCV &&
      CvISXSUB(reinterpret_cast<CV*>(SvRV(target))) && t->stack.size() >= 2) {
    // goto &xsub: the XSUB runs as a call from the caller of the sub that jumped (counted, as
    // NYTProf counts it; its time stays that sub's last statement's).
    Shared shared;
    uint32_t callee = SubIndex(aTHX_ reinterpret_cast<CV*>(SvRV(target)));
    if (t->on && !g->subs[callee].profiler) {
      ++t->calls[{t->stack[t->stack.size() - 2].sub, callee}];
      t->calls_changed = true;
    }
  }
  OP* next = op->op_ppaddr(aTHX);
  if (to_sub && next && cxstack_ix >= 0) {
    PERL_CONTEXT* cx = &cxstack[cxstack_ix];
    if (CxTYPE(cx) == CXt_SUB && !CvISXSUB(cx->blk_sub.cv) && CvSTART(cx->blk_sub.cv) == next)
      EnterSub(aTHX_ t, cx->blk_sub.cv);
  }
  return next;
}

}  // namespace

void WatchOps() {
  if (g_pp_perl[OP_ENTERSUB]) return;
  g_pp_perl[OP_ENTERSUB] = PL_ppaddr[OP_ENTERSUB];
  PL_ppaddr[OP_ENTERSUB] = WatchEntersub;
  for (unsigned type = 0; type < OP_max; ++type) {
    if (!IsSlowOp(type)) continue;
    g_pp_perl[type] = PL_ppaddr[type];
    PL_ppaddr[type] = WatchSlowOp;
  }
}

int RunOpsExact(pTHX) {
  OP* op = PL_op;
  if (__builtin_expect(g->child_pending, 0)) BeginForkedChild();
  ThreadState* t = g->active && !g->finished ? StateFor(aTHX) : nullptr;
  if (t && op && cxstack_ix >= 0) {
    // call_sv (BEGIN blocks, DESTROY, callbacks from XS code, an ithread's start) runs
    // pp_entersub itself and starts this loop at the sub's first op.
    PERL_CONTEXT* cx = &cxstack[cxstack_ix];
    if (CxTYPE(cx) == CXt_SUB && !CxMULTICALL(cx) && CvSTART(cx->blk_sub.cv) == op)
      EnterSub(aTHX_ t, cx->blk_sub.cv);
  }
  while (op) {
    if (__builtin_expect(g->child_pending, 0)) {
      BeginForkedChild();
      t = g->active ? StateFor(aTHX) : nullptr;
    }
    if (t && g->active && !g->finished) {
      switch (op->op_type) {
        case OP_NEXTSTATE:
        case OP_DBSTATE:
          if (__builtin_expect(g_fatal_signal.load(std::memory_order_relaxed), 0))
            TakeFatalSignal();
          OnStatement(aTHX_ t, cCOPx(op));
          break;
        case OP_ENTERSUB:
          PL_op = op = RunEntersub(aTHX_ t, op);
          continue;
        case OP_GOTO:
          PL_op = op = RunGoto(aTHX_ t, op);
          continue;
        case OP_EXEC: {
          Shared shared;
          Flush(t);
          break;
        }
        default:
          if (IsSlowOp(op->op_type)) {
            t->op_ours = op->op_ppaddr == WatchSlowOp;
            PL_op = op = RunTimedAsSub(aTHX_ t, op, SlowOpSubShared(aTHX_ op->op_type));
            continue;
          }
          break;
      }
    }
    PL_op = op = op->op_ppaddr(aTHX);
  }
  PERL_ASYNC_CHECK();
  TAINT_NOT;
  return 0;
}

}  // namespace hotline::perl

// Exact mode: a runops loop that notes each statement (nextstate / dbstate) before it runs and
// each sub call (entersub). One rdtsc per statement; time runs from the start of one statement
// to the start of the next (NYTProf's rule) and goes to the node that was current.
#include "profiler.h"

namespace hotline::perl {
namespace {

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

}  // namespace

int RunOpsExact(pTHX) {
  OP* op = PL_op;
  if (g->active && !g->finished && my_perl == g->interp && op && cxstack_ix >= 0) {
    // call_sv (BEGIN blocks, DESTROY, callbacks from XS code) runs pp_entersub itself and
    // starts this loop at the sub's first op.
    PERL_CONTEXT* cx = &cxstack[cxstack_ix];
    if (CxTYPE(cx) == CXt_SUB && !CxMULTICALL(cx) && CvSTART(cx->blk_sub.cv) == op)
      EnterSub(aTHX_ cx->blk_sub.cv);
  }
  while (op) {
    if (__builtin_expect(g->child_pending, 0) && my_perl == g->interp) BeginForkedChild();
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

}  // namespace hotline::perl

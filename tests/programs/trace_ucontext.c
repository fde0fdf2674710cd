// A context switch onto a stack that is an array in main's frame: foo swaps to a context
// running bar on it, bar returns to foo through uc_link, then main calls baz. The timed tracer
// must not take main and foo for frames a longjmp abandoned when bar's entry hook runs above
// them: bar nests under foo (inside swapcontext), and main calls baz.
#include <stdio.h>
#include <ucontext.h>

static ucontext_t caller_context, bar_context;

__attribute__((noinline)) void bar(void) { puts("bar"); }

__attribute__((noinline)) void foo(void) { swapcontext(&caller_context, &bar_context); }

__attribute__((noinline)) int baz(int n) { return n % 2; }

int main(void) {
  char stack[16384];
  getcontext(&bar_context);
  bar_context.uc_link = &caller_context;
  bar_context.uc_stack.ss_sp = stack;
  bar_context.uc_stack.ss_size = sizeof stack;
  makecontext(&bar_context, bar, 0);
  foo();
  return baz(4);
}

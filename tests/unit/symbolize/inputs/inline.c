// Symbolizer test input: a static inline function inlined into its only caller, and a probe
// that hands back a real return address. The test finds the lines marked "LINE: name".
#include <stddef.h>

static inline int sym_square_sum(const int* values, size_t count) {  // LINE: square_sum_decl
  int sum = 0;
  for (size_t i = 0; i < count; ++i) {
    sum += values[i] * values[i];  // LINE: square_sum_body
  }
  return sum;
}

__attribute__((noinline)) int sym_caller(const int* values, size_t count) {  // LINE: caller_decl
  int total = sym_square_sum(values, count);                                 // LINE: caller_call
  return total + 1;
}

__attribute__((noipa)) void* sym_return_address(void) { return __builtin_return_address(0); }

__attribute__((noipa)) void* sym_probe(void) {  // LINE: probe_decl
  void* address = sym_return_address();         // LINE: probe_call
  // Uses the result after the call so the call cannot become a tail jump.
  __asm__ volatile("" : "+r"(address));
  return address;
}

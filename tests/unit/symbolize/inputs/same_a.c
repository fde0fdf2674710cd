// Symbolizer test input: a static function whose name same_b.c uses too.
__attribute__((noipa)) static int helper(int x) {  // LINE: helper_a
  return x * 3 + 1;
}

int sym_a(int x) { return helper(x) + helper(x + 1); }

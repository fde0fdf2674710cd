// Symbolizer test input: a static function whose name same_a.c uses too.
__attribute__((noipa)) static int helper(int x) {  // LINE: helper_b
  return x * 5 - 2;
}

int sym_b(int x) { return helper(x) * helper(x - 1); }

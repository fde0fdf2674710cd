// Symbolizer test input: an executable, used stripped and unstripped.
#include <stdio.h>

__attribute__((noipa)) int sym_exe_work(int n) {  // LINE: exe_work_decl
  int sum = 0;
  for (int i = 0; i < n; ++i) sum += i ^ (sum >> 3);
  return sum;
}

int main(int argc, char** argv) {
  (void)argv;
  printf("%d\n", sym_exe_work(argc * 1000));
  return 0;
}

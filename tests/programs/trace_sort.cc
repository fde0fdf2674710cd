// std::sort of eight ints with a lambda comparator, built at -O2 with -finstrument-functions:
// the comparator's call operator is inlined in some places and out of line in others, and GCC
// names the inlined copies only by their DWARF name. Counts mode must find the same callers as
// timed mode's shadow stack.
#include <algorithm>
#include <cstdio>
int main() {
  int v[8] = {5, 3, 8, 1, 9, 2, 7, 4};
  std::sort(v, v + 8, [](int a, int b) { return a < b; });
  std::printf("%d %d\n", v[0], v[7]);
  return 0;
}

// std::sort of N pseudo-random ints with a lambda comparator, ROUNDS times: at -O2 with
// -finstrument-functions every template function it instantiates (the comparator's call
// operator, the insertion and heap helpers) calls the hooks, most of them inlined copies.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1000000;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 4;
  std::vector<int> v(n);
  unsigned long long sum = 0;
  for (int r = 0; r < rounds; ++r) {
    unsigned x = 12345u + unsigned(r);
    for (int& e : v) e = int((x = x * 1103515245u + 12345u) >> 1);
    std::sort(v.begin(), v.end(), [](int a, int b) { return a < b; });
    sum += unsigned(v[n / 2]);
  }
  std::printf("%llu\n", sum);
  return 0;
}

// Two lambdas on one line doing 20% and 80% of the work, each passed to one instantiation of a
// function template: four functions whose DWARF names are alike (`operator()`, `run<...>`). Both
// do their work in one shared loop, so that the 20/80 split is the same on every CPU (two loops
// of their own ran 27/73 on an AMD EPYC, by perf too).
#include <cstdio>
#include <cstdlib>

static volatile unsigned long sink;

__attribute__((noinline)) void spin(unsigned long n, int k) {
  for (unsigned long i = 0; i < n; ++i) sink = sink + (i ^ k);
}

template <typename F>
__attribute__((noinline)) void run(F f, int rounds) {
  for (int i = 0; i < rounds; ++i) f(i);
}

int main(int argc, char** argv) {
  unsigned long n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 20000000UL;
  // clang-format off
  auto light = [n](int k) { spin(n, k); }; auto heavy = [n](int k) { spin(4 * n, k); };
  // clang-format on
  run(light, 5);
  run(heavy, 5);
  std::printf("%lu\n", sink);
  return 0;
}

// Throws through three instrumented frames and catches, 100 times: every frame's exit hook runs
// during unwinding, so the stream stays balanced and the counts exact.
#include <cstdio>
#include <stdexcept>

__attribute__((noinline)) void level3(int i) {
  if (i >= 0) throw std::runtime_error("deep");
}
__attribute__((noinline)) void level2(int i) { level3(i); }
__attribute__((noinline)) void level1(int i) { level2(i); }
__attribute__((noinline)) int after() { return 1; }

int main() {
  int caught = 0;
  for (int i = 0; i < 100; ++i) {
    try {
      level1(i);
    } catch (const std::exception&) {
      caught += after();
    }
  }
  std::printf("caught %d\n", caught);
  return 0;
}

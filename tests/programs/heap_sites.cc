// Allocations a C++ programmer makes through the standard library: std::vector growing from
// analytics::crunch, reached from two stages (three calls from stage_a, one from stage_b), and
// std::string's own buffers. The heap sites must name crunch's line and push_back, not
// new_allocator.h.
#include <cstdio>
#include <string>
#include <vector>

namespace analytics {

__attribute__((noinline)) long crunch(int n) {
  std::vector<long> values;
  for (int i = 0; i < n; ++i) values.push_back(i);  // the vector's growth: its site
  long sum = 0;
  for (long v : values) sum += v;
  return sum;
}

}  // namespace analytics

__attribute__((noinline)) long stage_a() {
  long sum = 0;
  for (int i = 0; i < 3; ++i) sum += analytics::crunch(1000);
  return sum;
}

// Not a tail call: stage_b keeps its frame.
__attribute__((noinline)) long stage_b() { return analytics::crunch(1000) + 1; }

__attribute__((noinline)) size_t label_length(int i) {
  std::string label(200, static_cast<char>('a' + i % 26));  // one buffer of 201 bytes
  return label.size();
}

int main() {
  long sum = stage_a() + stage_b();
  size_t length = 0;
  for (int i = 0; i < 10; ++i) length += label_length(i);
  std::printf("%ld %zu\n", sum, length);
  return 0;
}

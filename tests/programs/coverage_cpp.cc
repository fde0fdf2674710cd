// A class, a template and an exception path: counts must equal gcov's on every line.
#include <cstdio>
#include <stdexcept>
#include <vector>

template <typename T>
T total(const std::vector<T>& values) {
  T sum{};
  for (const T& v : values) sum += v;
  return sum;
}

class Counter {
 public:
  void add(int n) {
    if (n < 0) throw std::invalid_argument("negative");
    count_ += n;
  }
  int count() const { return count_; }

 private:
  int count_ = 0;
};

int main() {
  Counter c;
  for (int i = 0; i < 50; ++i) c.add(i);
  try {
    c.add(-1);
  } catch (const std::invalid_argument&) {
    std::puts("caught");
  }
  std::vector<double> v(10, 1.5);
  std::printf("%d %.1f\n", c.count(), total(v));
  return 0;
}

// C++ at -O2 for the instruction counts against callgrind (instructions_test): templates,
// inlined member functions, the standard library's containers and algorithms.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

template <typename T>
struct Matrix {
  int n;
  std::vector<T> cells;
  explicit Matrix(int size) : n(size), cells(size_t(size) * size) {}
  T& at(int i, int j) { return cells[size_t(i) * n + j]; }
  const T& at(int i, int j) const { return cells[size_t(i) * n + j]; }
};

template <typename T>
Matrix<T> Multiply(const Matrix<T>& a, const Matrix<T>& b) {
  Matrix<T> c(a.n);
  for (int i = 0; i < a.n; ++i)
    for (int k = 0; k < a.n; ++k) {
      T aik = a.at(i, k);
      for (int j = 0; j < a.n; ++j) c.at(i, j) += aik * b.at(k, j);
    }
  return c;
}

static std::map<std::string, int> CountWords(const std::vector<std::string>& words) {
  std::map<std::string, int> counts;
  for (const std::string& w : words) ++counts[w];
  return counts;
}

int main() {
  Matrix<double> a(60), b(60);
  for (int i = 0; i < 60; ++i)
    for (int j = 0; j < 60; ++j) a.at(i, j) = b.at(j, i) = (i * 31 + j * 17) % 11;
  Matrix<double> c = Multiply(a, b);
  Matrix<long> d(40), e(40);
  for (int i = 0; i < 40; ++i)
    for (int j = 0; j < 40; ++j) d.at(i, j) = e.at(i, j) = i ^ j;
  Matrix<long> f = Multiply(d, e);
  std::vector<int> values;
  for (int i = 0; i < 50000; ++i) values.push_back((i * 7919) % 10007);
  std::sort(values.begin(), values.end(),
            [](int x, int y) { return x % 100 < y % 100 || (x % 100 == y % 100 && x < y); });
  std::vector<std::string> words;
  for (int i = 0; i < 20000; ++i) words.push_back("w" + std::to_string(i % 257));
  std::map<std::string, int> counts = CountWords(words);
  std::printf("%g %ld %d %zu\n", c.at(3, 4), f.at(5, 6), values[100], counts.size());
  return 0;
}

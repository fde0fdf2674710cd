// For the HTML report's escaping test: names and source text that would run a script if a report
// put them into its page as markup.
// </script><img src=x onerror="window.__hotline_pwned=1;alert(1)"><!-- & &amp; -->
// <script>window.__hotline_pwned = 2; alert(2)</script>
#include <cstdio>

#include "burn.h"

struct Box {
  double v;
};

// Named `operator<(Box const&, Box const&)`: a `<` and an `&` in a function's name.
__attribute__((noinline)) bool operator<(const Box& a, const Box& b) {
  return a.v + burn_cpu(0.2) < b.v + 1e9;
}

// `spin<double>(double&)`, and a string that ends a script: "</script><script>alert(3)</script>"
template <typename T>
__attribute__((noinline)) double spin(T& x) {
  return burn_cpu(0.1) + x;
}

int main() {
  Box a{1}, b{2};
  double d = 1;
  bool less = a < b;
  std::printf("html_hostile %d\n", less && spin<double>(d) > 0);
  return 0;
}

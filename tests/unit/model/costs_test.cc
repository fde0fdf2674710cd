// Knuth's cost model on call graphs far larger than any test program's, built in memory.
#include "model/costs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace hotline::model {
namespace {

// A chain f0 → f1 → … → f(n−1), each run once, each line one instruction, and every tenth pair
// (f(i), f(i+1)) also calling each other back a few times: cycles of mutual recursion along the
// way. Every function's implicit cost is then the explicit cost of the rest of the chain.
struct Chain {
  format::RawProfile raw;
  symbolize::CodeMap code;
};

Chain MakeChain(int n) {
  Chain c;
  format::RawLineCounts lines{"chain.c", "chain", {}};
  for (int i = 0; i < n; ++i) {
    std::string name = "f" + std::to_string(i);
    bool cycle_head = i % 10 == 0 && i + 1 < n;
    bool cycle_tail = i % 10 == 1;
    // f(i) of a cycle is entered once from its caller and 3 times from f(i+1).
    uint64_t runs = cycle_head ? 4 : 1;
    c.raw.function_counts.push_back(
        format::RawFunctionCount{"chain.c", name, uint64_t(i + 1), uint64_t(i + 1), runs});
    lines.lines.emplace_back(uint64_t(2 * i + 1), runs);  // the body
    lines.lines.emplace_back(uint64_t(2 * i + 2), 1);     // the call down the chain
    symbolize::CodeFunction f{name, {{"chain.c", uint32_t(2 * i + 1), 1}}, {}};
    if (i + 1 < n)
      f.calls.push_back({"chain.c", uint32_t(2 * i + 2), "f" + std::to_string(i + 1), 1});
    if (cycle_tail) {
      // Three calls back into f(i−1), on a line that runs 3 times.
      lines.lines.back().second = 1;
      lines.lines.emplace_back(uint64_t(2 * n + i), 3);
      f.calls.push_back({"chain.c", uint32_t(2 * n + i), "f" + std::to_string(i - 1), 1});
    }
    c.code.functions.push_back(std::move(f));
  }
  std::sort(lines.lines.begin(), lines.lines.end());
  c.raw.line_counts.push_back(std::move(lines));
  return c;
}

// 100,000 functions: as one dense system this would be 80 GB of matrix.
TEST(CostModel, SolvesAHundredThousandFunctionsComponentByComponent) {
  const int n = 100'000;
  Chain chain = MakeChain(n);
  Expected<CostModel> model = CostsFromCounts(chain.raw, chain.code);
  ASSERT_TRUE(model.ok()) << model.status().message();
  ASSERT_EQ(model->functions.size(), size_t(n));
  // Explicit cost: one instruction per run of each body; cycle heads run 4 times.
  double heads = (n + 9) / 10;
  double total = n + 3 * heads;
  EXPECT_DOUBLE_EQ(model->total, total);
  // The first function (with f1, its partner in a cycle) holds everything.
  EXPECT_NEAR(model->functions.front().implicit_cost, total, 1e-6 * total);
  const FunctionCost *first = nullptr, *last = nullptr;
  int cycles = 0;
  for (const FunctionCost& f : model->functions) {
    if (f.name == "f0") first = &f;
    if (f.name == "f" + std::to_string(n - 1)) last = &f;
    if (f.cycle >= 0) ++cycles;
  }
  ASSERT_NE(first, nullptr);
  ASSERT_NE(last, nullptr);
  EXPECT_NEAR(first->implicit_cost, total, 1e-6 * total);
  EXPECT_NEAR(last->implicit_cost, 1.0, 1e-9);
  EXPECT_EQ(cycles, 2 * (n / 10));  // both members of every pair
}

}  // namespace
}  // namespace hotline::model

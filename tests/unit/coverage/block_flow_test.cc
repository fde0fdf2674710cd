// Block counts from counters and flow conservation (coverage/block_flow.h), on graphs whose
// counts are known: what the equations fix, what they leave as a range, and what contradicts
// them.
#include "coverage/block_flow.h"

#include <gtest/gtest.h>

namespace hotline::coverage {
namespace {

constexpr int kOut = FlowGraph::kOutside;

// if (c) A else B, then C: counters on the entry and on A.
TEST(BlockFlow, ADiamondFollowsFromTwoCounters) {
  FlowGraph g;
  g.blocks = 4;  // 0 entry, 1 A, 2 B, 3 C
  g.edges = {{kOut, 0}, {0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, kOut}};
  g.counters = {{10, {{0, 1}}}, {7, {{1, 1}}}};
  FlowCounts c = SolveFlow(g);
  ASSERT_TRUE(c.consistent);
  EXPECT_EQ(c.exact[2], 3u);
  EXPECT_EQ(c.exact[3], 10u);
}

// A loop whose body holds the only counter besides the entry's: the test block runs once more
// per entry than the body. Elimination, not propagation alone, fixes it.
TEST(BlockFlow, ALoopsTestRunsOnceMorePerEntry) {
  FlowGraph g;
  g.blocks = 4;  // 0 entry, 1 test, 2 body, 3 exit
  g.edges = {{kOut, 0}, {0, 1}, {1, 2}, {2, 1}, {1, 3}, {3, kOut}};
  g.counters = {{5, {{0, 1}}}, {40, {{2, 1}}}};
  FlowCounts c = SolveFlow(g);
  ASSERT_TRUE(c.consistent);
  EXPECT_EQ(c.exact[1], 45u);
  EXPECT_EQ(c.exact[3], 5u);
}

// Two copies of a counter's block (a copy made after instrumentation): their sum is known, each
// alone is a range bounded by it.
TEST(BlockFlow, CopiesSharingACounterAreARange) {
  FlowGraph g;
  g.blocks = 4;  // 0 entry, 1 copy, 2 copy, 3 join
  g.edges = {{kOut, 0}, {0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, kOut}};
  g.counters = {{8, {{0, 1}}}, {8, {{1, 1}, {2, 1}}}};
  FlowCounts c = SolveFlow(g);
  ASSERT_TRUE(c.consistent);
  EXPECT_FALSE(c.exact[1]);
  EXPECT_FALSE(c.exact[2]);
  EXPECT_EQ(c.most[1], 8u);
  EXPECT_EQ(c.most[2], 8u);
  EXPECT_EQ(c.exact[3], 8u);  // the sum of the copies is fixed
  ASSERT_TRUE(c.sum);
  EXPECT_EQ(c.sum({{1, 3}, {2, 3}}), 24u);  // three instructions in each copy
  EXPECT_EQ(c.sum({{1, 3}}), std::nullopt);
  EXPECT_EQ(c.sum({{0, 2}, {1, 1}, {2, 1}}), 24u);
  // Each copy alone runs at most what the counter says, and so do both together: not twice.
  ASSERT_TRUE(c.range_of);
  EXPECT_EQ(c.range_of({{1, 3}}), std::make_pair(uint64_t{0}, uint64_t{24}));
  EXPECT_EQ(c.range_of({{1, 3}, {2, 1}}), std::make_pair(uint64_t{8}, uint64_t{24}));
}

// A loop no counter is in, in a function that ran: any number of iterations fits.
TEST(BlockFlow, ALoopWithoutACounterIsUnbounded) {
  FlowGraph g;
  g.blocks = 2;  // 0 entry (counted), 1 a self-loop
  g.edges = {{kOut, 0}, {0, 1}, {1, 1}, {1, kOut}};
  g.counters = {{3, {{0, 1}}}};
  FlowCounts c = SolveFlow(g);
  ASSERT_TRUE(c.consistent);
  EXPECT_FALSE(c.exact[1]);
  EXPECT_EQ(c.most[1], FlowCounts::kUnbounded);
}

// The same loop in a function never called: flow cannot start, so it never ran.
TEST(BlockFlow, NothingRunsWhereNoEntryReaches) {
  FlowGraph g;
  g.blocks = 2;
  g.edges = {{kOut, 0}, {0, 1}, {1, 1}, {1, kOut}};
  g.counters = {{0, {{0, 1}}}};
  FlowCounts c = SolveFlow(g);
  ASSERT_TRUE(c.consistent);
  EXPECT_EQ(c.exact[1], 0u);
}

// A counter larger than all that can enter its block: the graph is not the code's.
TEST(BlockFlow, CountsThatContradictTheFlowAreInconsistent) {
  FlowGraph g;
  g.blocks = 2;
  g.edges = {{kOut, 0}, {0, 1}, {1, kOut}};
  g.counters = {{4, {{0, 1}}}, {9, {{1, 1}}}};
  EXPECT_FALSE(SolveFlow(g).consistent);
}

}  // namespace
}  // namespace hotline::coverage

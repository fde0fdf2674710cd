// The call-graph accumulation on hand-written streams. Every expected number is worked out by
// hand in the comments: the clock is the thread's running sum of sample times, a sample's time
// goes to the innermost function's self time, and stack changes happen before the sample's time
// is added.
#include "model/call_graph.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace hotline::model {
namespace {

const FunctionId M(0u), A(1u), B(2u), F(3u), G(4u);

class CallGraphTest : public ::testing::Test {
 protected:
  void sample(uint64_t thread, std::vector<FunctionId> stack, uint64_t ns) {
    last_ = graph_.onSample(thread, stack, ns);
  }
  const FunctionTotals& fn(FunctionId id) { return graph_.functions().at(id.index()); }
  const EdgeTotals& edge(FunctionId parent, FunctionId child) {
    for (const EdgeTotals& e : graph_.edges())
      if (e.parent == parent && e.child == child) return e;
    ADD_FAILURE() << "no edge " << parent.index() << "->" << child.index();
    static EdgeTotals none;
    return none;
  }
  // self + Σ child time = inclusive, for every function.
  void expectSectionsAddUp() {
    std::vector<uint64_t> sum(graph_.functions().size());
    for (size_t i = 0; i < sum.size(); ++i) sum[i] = graph_.functions()[i].self_ns;
    for (const EdgeTotals& e : graph_.edges()) sum[e.parent.index()] += e.time_ns;
    for (size_t i = 0; i < sum.size(); ++i) {
      EXPECT_EQ(sum[i], graph_.functions()[i].inclusive_ns) << "function " << i;
      EXPECT_LE(graph_.functions()[i].inclusive_ns, graph_.total_ns()) << "function " << i;
    }
  }

  CallGraphBuilder graph_;
  StackChange last_;
};

TEST_F(CallGraphTest, PlainCallsWithoutRecursion) {
  sample(1, {M}, 1);        // clock 0→1, M self 1
  sample(1, {M, F}, 2);     // push F at 1; F self 2, clock 3
  sample(1, {M, F, G}, 3);  // push G at 3; G self 3, clock 6
  sample(1, {M}, 4);        // pop G: 6−3 = 3; pop F: 6−1 = 5; M self 4, clock 10
  graph_.finish();          // pop M: 10
  EXPECT_EQ(last_.popped, 2u);
  EXPECT_EQ(last_.common, 1u);
  EXPECT_EQ(graph_.total_ns(), 10u);
  EXPECT_EQ(fn(M).self_ns, 5u);
  EXPECT_EQ(fn(M).inclusive_ns, 10u);
  EXPECT_EQ(fn(F).self_ns, 2u);
  EXPECT_EQ(fn(F).inclusive_ns, 5u);
  EXPECT_EQ(fn(G).inclusive_ns, 3u);
  EXPECT_EQ(edge(M, F).time_ns, 5u);
  EXPECT_EQ(edge(M, F).loop_ns, 0u);
  EXPECT_EQ(edge(F, G).time_ns, 3u);
  EXPECT_EQ(graph_.max_depth(), 3u);
  expectSectionsAddUp();
}

TEST_F(CallGraphTest, DirectRecursion) {
  // m → f → f → f, then back out.
  sample(1, {M, F}, 1);        // push M, F1 at 0. F self 1; credited[F] 1; clock 1
  sample(1, {M, F, F}, 2);     // push F2 at 1: edge F→F outermost, credited[F] at start 1
                               // F self 2; credited[F] 3; clock 3
  sample(1, {M, F, F, F}, 4);  // push F3 at 3: edge F→F already open (not outermost)
                               // F self 4; credited[F] 7; clock 7
  sample(1, {M, F, F}, 8);     // pop F3 (neither outermost of F nor of F→F: nothing)
                               // F self 8; credited[F] 15; clock 15
  sample(1, {M, F}, 16);       // pop F2: elapsed 15−1 = 14; F gained 15−1 = 14 meanwhile,
                               // so F→F loop 14, time 0. F self 16; clock 31
  sample(1, {M}, 32);          // pop F1 (outermost F): inclusive F 31; M→F: M gained 0,
                               // so time 31. M self 32; clock 63
  graph_.finish();             // pop M: inclusive M 63
  EXPECT_EQ(fn(F).self_ns, 31u);
  EXPECT_EQ(fn(F).inclusive_ns, 31u);  // never counted twice: ≤ the total of 63
  EXPECT_EQ(fn(F).calls, 3u);
  EXPECT_EQ(edge(F, F).time_ns, 0u);
  EXPECT_EQ(edge(F, F).loop_ns, 14u);
  EXPECT_EQ(edge(F, F).calls, 2u);  // n/m = 2/3
  EXPECT_EQ(edge(M, F).time_ns, 31u);
  EXPECT_EQ(edge(M, F).loop_ns, 0u);
  EXPECT_EQ(fn(M).inclusive_ns, 63u);
  EXPECT_EQ(fn(M).self_ns, 32u);
  expectSectionsAddUp();
}

TEST_F(CallGraphTest, MutualRecursion) {
  // m → a → b → a → b, then back out.
  sample(1, {M, A}, 1);           // push M, A1 at 0. A self 1; cA = 1; clock 1
  sample(1, {M, A, B}, 2);        // push B1 at 1: A→B outermost, cA at start 1
                                  // B self 2; cB = 2; clock 3
  sample(1, {M, A, B, A}, 4);     // push A2 at 3: B→A outermost, cB at start 2
                                  // A self 4; cA = 5; clock 7
  sample(1, {M, A, B, A, B}, 8);  // push B2 at 7: A→B already open. B self 8; cB = 10;
                                  // clock 15
  sample(1, {M, A, B, A}, 16);    // pop B2: nothing outermost. A self 16; cA = 21; clock 31
  sample(1, {M, A, B}, 32);       // pop A2: elapsed 31−3 = 28, B gained 10−2 = 8:
                                  // B→A loop 8, time 20; cB = 30.
                                  // B self 32; cB = 62; clock 63
  sample(1, {M, A}, 64);          // pop B1 (outermost B): inclusive B 62. A→B: elapsed
                                  // 63−1 = 62, A gained 21−1 = 20: loop 20, time 42;
                                  // cA = 63. A self 64; cA = 127; clock 127
  sample(1, {M}, 128);            // pop A1: inclusive A 127; M→A time 127.
                                  // M self 128; clock 255
  graph_.finish();                // pop M: inclusive M 255
  EXPECT_EQ(fn(A).self_ns, 85u);  // 1 + 4 + 16 + 64
  EXPECT_EQ(fn(B).self_ns, 42u);  // 2 + 8 + 32
  EXPECT_EQ(fn(A).inclusive_ns, 127u);
  EXPECT_EQ(fn(B).inclusive_ns, 62u);
  EXPECT_EQ(edge(A, B).time_ns, 42u);  // 85 + 42 = 127
  EXPECT_EQ(edge(A, B).loop_ns, 20u);
  EXPECT_EQ(edge(B, A).time_ns, 20u);  // 42 + 20 = 62
  EXPECT_EQ(edge(B, A).loop_ns, 8u);
  EXPECT_EQ(edge(M, A).time_ns, 127u);
  EXPECT_EQ(fn(A).calls, 2u);
  EXPECT_EQ(fn(B).calls, 2u);
  EXPECT_EQ(edge(A, B).calls, 2u);
  EXPECT_EQ(edge(B, A).calls, 1u);
  EXPECT_EQ(fn(M).inclusive_ns, 255u);
  expectSectionsAddUp();
}

TEST_F(CallGraphTest, RecursionThroughAnotherEdgeOfTheParent) {
  // p → c → p → d: while p→c is open, p gains self time and the time of p→d.
  sample(1, {A}, 1);           // push A1 at 0. A self 1; cA 1; clock 1
  sample(1, {A, B}, 1);        // push B at 1 (A→B outermost, cA 1). B self 1; clock 2
  sample(1, {A, B, A}, 1);     // push A2 at 2. A self 1; cA 2; clock 3
  sample(1, {A, B, A, G}, 1);  // push G at 3 (A→G outermost, cA 2). G self 1; clock 4
  sample(1, {A, B, A}, 1);     // pop G: elapsed 1, A gained 0: A→G time 1; cA 3.
                               // A self 1; cA 4; clock 5
  sample(1, {A, B}, 1);        // pop A2; B self 1; clock 6
  sample(1, {A}, 1);           // pop B: elapsed 6−1 = 5, A gained 4−1 = 3: A→B loop 3,
                               // time 2. A self 1; clock 7
  graph_.finish();             // pop A1: inclusive 7
  EXPECT_EQ(fn(A).self_ns, 4u);
  EXPECT_EQ(fn(A).inclusive_ns, 7u);
  EXPECT_EQ(edge(A, G).time_ns, 1u);
  EXPECT_EQ(edge(A, B).time_ns, 2u);  // 4 + 1 + 2 = 7
  EXPECT_EQ(edge(A, B).loop_ns, 3u);
  expectSectionsAddUp();
}

TEST_F(CallGraphTest, InterleavedThreadsKeepTheirOwnCredit) {
  // Thread 2's time in A while thread 1's A→B is open is not a recursion of thread 1.
  sample(1, {A, B}, 10);  // T1: push A, B; B self 10
  sample(2, {A}, 100);    // T2: push A; A self 100
  sample(1, {A}, 1);      // T1: pop B: elapsed 10, A gained 0 on T1: time 10, loop 0
  graph_.finish();        // T1 A: 11; T2 A: 100
  EXPECT_EQ(edge(A, B).time_ns, 10u);
  EXPECT_EQ(edge(A, B).loop_ns, 0u);
  EXPECT_EQ(fn(A).inclusive_ns, 111u);
  EXPECT_EQ(fn(A).self_ns, 101u);
  expectSectionsAddUp();
}

TEST_F(CallGraphTest, EndThreadClosesItsStack) {
  sample(7, {M, F}, 5);
  graph_.endThread(7);
  EXPECT_EQ(fn(F).inclusive_ns, 5u);
  EXPECT_EQ(fn(M).inclusive_ns, 5u);
  sample(7, {M, F}, 5);  // a new thread with the same id: a new activation
  EXPECT_EQ(last_.popped, 0u);
  EXPECT_EQ(last_.common, 0u);
  graph_.finish();
  EXPECT_EQ(fn(F).calls, 2u);
  EXPECT_EQ(fn(M).inclusive_ns, 10u);
  expectSectionsAddUp();
}

TEST_F(CallGraphTest, RandomRecursiveStreamsKeepTheInvariants) {
  // Random walks over a few functions recurse directly and mutually in every combination.
  std::mt19937_64 rng(42);
  std::vector<std::vector<FunctionId>> stacks(3);
  for (int i = 0; i < 20000; ++i) {
    uint64_t thread = rng() % 3;
    auto& stack = stacks[thread];
    int action = static_cast<int>(rng() % 3);
    if (action == 0 && !stack.empty()) stack.pop_back();
    if (action >= 1 && stack.size() < 12) stack.push_back(FunctionId(uint32_t(rng() % 4)));
    if (stack.empty()) stack.push_back(M);
    sample(thread, stack, 1 + rng() % 1000);
  }
  graph_.finish();
  expectSectionsAddUp();
  uint64_t self = 0;
  for (const FunctionTotals& f : graph_.functions()) self += f.self_ns;
  EXPECT_EQ(self, graph_.total_ns());
}

}  // namespace
}  // namespace hotline::model

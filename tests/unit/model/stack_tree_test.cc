// The flame graphs' trees on a hand-made Profile: merging by function along the path, both
// orders, one thread, self + children = total, and each function's hottest line.
#include "model/stack_tree.h"

#include <gtest/gtest.h>

namespace hotline::model {
namespace {

// main → work (3 ns) and main → idle (2 ns) on thread 0, main → work (5 ns) on thread 1; work's
// frames sit on line 10 (3 ns) and line 11 (5 ns), main calls from line 1.
Profile SmallProfile() {
  Profile p;
  for (const char* name : {"main", "work", "idle"}) p.functions.emplace_back().name = name;
  p.files = {{.path = "a.c"}};
  p.lines = {{.file = FileId(0u), .line = 1},
             {.file = FileId(0u), .line = 10},
             {.file = FileId(0u), .line = 11},
             {.file = FileId(0u), .line = 20}};
  p.threads.resize(2);
  auto frame = [](uint32_t f, uint32_t l) {
    return StackFrame{.function = FunctionId(f), .line = LineId(l)};
  };
  p.addStack(std::vector<StackFrame>{frame(0, 0), frame(1, 1)});
  p.addStack(std::vector<StackFrame>{frame(0, 0), frame(2, 3)});
  p.addStack(std::vector<StackFrame>{frame(0, 0), frame(1, 2)});
  p.stack_times = {{StackId(0u), 0, 3, 3}, {StackId(1u), 0, 2, 2}, {StackId(2u), 1, 5, 5}};
  auto line = [](uint32_t f, uint32_t l, uint64_t self, uint64_t inclusive) {
    return FunctionLine{FunctionId(f), LineId(l), self, inclusive};
  };
  p.function_lines = {line(0, 0, 0, 10), line(1, 1, 3, 3), line(1, 2, 5, 5), line(2, 3, 2, 2)};
  return p;
}

const StackTreeNode* Child(const StackTree& t, uint32_t parent, uint32_t function) {
  for (uint32_t i = 1; i < t.nodes.size(); ++i)
    if (t.nodes[i].parent == parent && t.nodes[i].function == FunctionId(function))
      return &t.nodes[i];
  return nullptr;
}

void ExpectSelfPlusChildrenIsTotal(const StackTree& t) {
  std::vector<uint64_t> children(t.nodes.size(), 0);
  for (uint32_t i = 1; i < t.nodes.size(); ++i) {
    EXPECT_LT(t.nodes[i].parent, i);
    children[t.nodes[i].parent] += t.nodes[i].total_ns;
  }
  for (uint32_t i = 0; i < t.nodes.size(); ++i)
    EXPECT_EQ(t.nodes[i].self_ns + children[i], t.nodes[i].total_ns) << "node " << i;
}

TEST(StackTree, CallersFirstMergesPathsByFunction) {
  StackTree t = BuildStackTree(SmallProfile(), StackOrder::kCallersFirst);
  ASSERT_EQ(t.nodes.size(), 4u);  // root, main, work, idle
  EXPECT_EQ(t.nodes[0].total_ns, 10u);
  const StackTreeNode* main = Child(t, 0, 0);
  ASSERT_TRUE(main);
  uint32_t main_index = static_cast<uint32_t>(main - t.nodes.data());
  EXPECT_EQ(main->total_ns, 10u);
  EXPECT_EQ(main->self_ns, 0u);
  ASSERT_TRUE(Child(t, main_index, 1));
  EXPECT_EQ(Child(t, main_index, 1)->total_ns, 8u);
  EXPECT_EQ(Child(t, main_index, 1)->self_ns, 8u);
  EXPECT_EQ(Child(t, main_index, 2)->total_ns, 2u);
  ExpectSelfPlusChildrenIsTotal(t);
}

TEST(StackTree, CalleesFirstStartsWhereTheTimeWasSpent) {
  StackTree t = BuildStackTree(SmallProfile(), StackOrder::kCalleesFirst);
  ASSERT_TRUE(Child(t, 0, 1) && Child(t, 0, 2));
  EXPECT_EQ(Child(t, 0, 1)->total_ns, 8u);
  EXPECT_EQ(Child(t, 0, 2)->total_ns, 2u);
  EXPECT_EQ(Child(t, 0, 0), nullptr);  // main spent nothing itself
  ExpectSelfPlusChildrenIsTotal(t);
}

TEST(StackTree, OneThread) {
  StackTree t = BuildStackTree(SmallProfile(), StackOrder::kCallersFirst, 1);
  EXPECT_EQ(t.nodes[0].total_ns, 5u);
  EXPECT_EQ(t.nodes.size(), 3u);  // root, main, work
  ExpectSelfPlusChildrenIsTotal(t);
}

TEST(StackTree, HottestLineOfEachFunction) {
  std::vector<LineId> hottest = HottestLines(SmallProfile());
  ASSERT_EQ(hottest.size(), 3u);
  EXPECT_EQ(hottest[0], LineId(0u));  // main: all its time passes line 1
  EXPECT_EQ(hottest[1], LineId(2u));  // work: 5 ns on line 11 against 3 on line 10
  EXPECT_EQ(hottest[2], LineId(3u));
}

}  // namespace
}  // namespace hotline::model

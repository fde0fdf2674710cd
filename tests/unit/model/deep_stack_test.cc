// Deep recursion costs the model its depth, not its square (issue 26, item 14): a recursion N
// levels deep sampled at every level has N stacks of 1..N frames, N²/2 frames in all, and the
// model keeps them as a trie of 2N frames; the call graph still counts the recursion as loop and
// every invariant holds. StackPath, which follows a thread's stack over that trie, agrees with
// comparing the stacks whole.
#include <gtest/gtest.h>
#include <unistd.h>

#include <random>
#include <string>
#include <vector>

#include "model/build.h"
#include "model/invariants.h"
#include "model/merge.h"
#include "model/stack_path.h"
#include "model/stack_tree.h"
#include "no_resolver.h"
#include "sample_profile.h"

namespace hotline::model {
namespace {

const Function& Named(const Profile& p, const std::string& name) {
  for (const Function& f : p.functions)
    if (f.name == name) return f;
  ADD_FAILURE() << "no function " << name;
  return p.functions.front();
}

FunctionId IdOf(const Profile& p, const std::string& name) {
  return FunctionId(static_cast<size_t>(&Named(p, name) - p.functions.data()));
}

const CallEdge* Edge(const Profile& p, FunctionId from, FunctionId to) {
  for (const CallEdge& e : p.calleesOf(from))
    if (e.child == to) return &e;
  return nullptr;
}

uint64_t LineInclusive(const Profile& p, uint32_t number) {
  for (const Line& l : p.lines)
    if (p.file(l.file).path == "x.pl" && l.line == number) return l.inclusive_ns;
  ADD_FAILURE() << "no line x.pl:" << number;
  return 0;
}

TEST(DeepStack, ARecursionOfDepthNKeepsNFramesAndCountsTheRecursionAsLoop) {
  constexpr uint32_t kDepth = 5000;
  std::string path = "/tmp/hotline-deep-" + std::to_string(getpid()) + ".hotline";
  ASSERT_TRUE(testing::WriteDeepRecursionProfile(path, kDepth));
  NoResolver resolver;
  format::ReadStats stats;
  Expected<Profile> loaded = LoadProfile(path, resolver, {}, &stats);
  unlink(path.c_str());
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const Profile& p = *loaded;
  EXPECT_FALSE(stats.damaged());
  Status invariants = CheckInvariants(p);
  EXPECT_TRUE(invariants.ok()) << invariants.message();

  // A frame per level as a caller, and one as the innermost frame of its sample; one stack per
  // sample. The stacks hold 12.5 million frames together.
  EXPECT_EQ(p.stack_frames.size(), 2 * kDepth - 1);
  EXPECT_EQ(p.stacks.size(), kDepth);
  EXPECT_EQ(p.depthOf(StackId(kDepth - 1)), kDepth);
  EXPECT_EQ(p.summary.max_depth, kDepth);

  // 1000 ns at each level: main alone once, then f at every depth below it.
  const uint64_t total = 1000ull * kDepth;
  EXPECT_EQ(p.summary.total_ns, total);
  FunctionId main = IdOf(p, "main"), f = IdOf(p, "main::f");
  EXPECT_EQ(p.function(main).self_ns, 1000u);
  EXPECT_EQ(p.function(main).inclusive_ns, total);
  EXPECT_EQ(p.function(f).self_ns, total - 1000);
  EXPECT_EQ(p.function(f).inclusive_ns, total - 1000);  // the outermost activation only
  EXPECT_EQ(p.function(f).calls, kDepth - 1u);
  const CallEdge* main_f = Edge(p, main, f);
  const CallEdge* f_f = Edge(p, f, f);
  ASSERT_TRUE(main_f && f_f);
  EXPECT_EQ(main_f->time_ns, total - 1000);
  EXPECT_EQ(main_f->loop_ns, 0u);
  // f's calls of itself brought all their time back into f: loop, none of it time.
  EXPECT_EQ(f_f->time_ns, 0u);
  EXPECT_EQ(f_f->loop_ns, total - 2000);
  EXPECT_EQ(f_f->calls, kDepth - 2u);
  // A line on the stack many times counts once per sample.
  EXPECT_EQ(LineInclusive(p, 5), total);
  EXPECT_EQ(LineInclusive(p, 3), total - 1000);

  // The flame graph's trees: callers first a chain, one node per level; callees first a chain
  // of f with main under each of its levels.
  StackTree callers = BuildStackTree(p, StackOrder::kCallersFirst);
  EXPECT_EQ(callers.nodes.size(), kDepth + 1u);
  EXPECT_EQ(callers.nodes[0].total_ns, total);
  EXPECT_EQ(callers.nodes.back().self_ns, 1000u);
  StackTree callees = BuildStackTree(p, StackOrder::kCalleesFirst);
  EXPECT_EQ(callees.nodes.size(), 2u * kDepth);
  EXPECT_EQ(callees.nodes[0].total_ns, total);
  // Merged with itself, a frame per level (frames at one line of one function under one caller
  // are one), and the times double.
  Expected<Profile> twice = MergeProfiles({&p, &p}, MergeOptions{});
  ASSERT_TRUE(twice.ok()) << twice.status().message();
  EXPECT_EQ(twice->stack_frames.size(), kDepth);
  EXPECT_EQ(twice->summary.total_ns, 2 * total);
  EXPECT_TRUE(CheckInvariants(*twice).ok());
}

// Random stacks over a small alphabet of functions (so that different frames of one function
// meet), followed with StackPath and compared with the whole stacks: the functions, and the
// outer frames kept, which must be the longest common prefix of functions.
TEST(DeepStack, StackPathAgreesWithComparingWholeStacks) {
  std::mt19937 random(26);
  Profile p;
  // A trie of 3000 frames: each under a random earlier frame (or outermost), function 0..3.
  for (uint32_t i = 0; i < 3000; ++i) {
    StackFrame f;
    f.function = FunctionId(uint32_t(random() % 4));
    f.line = LineId(uint32_t(random() % 3));
    if (i > 0 && random() % 10 != 0) {
      f.caller = FrameId(uint32_t(random() % i));
      f.depth = p.stack_frames[f.caller.index()].depth + 1;
    }
    p.stack_frames.push_back(f);
  }
  auto whole = [&](FrameId leaf) {
    std::vector<FunctionId> functions;
    for (FrameId at = leaf; at.valid(); at = p.frame(at).caller)
      functions.insert(functions.begin(), p.frame(at).function);
    return functions;
  };
  StackPath path(p.stack_frames);
  std::vector<FunctionId> previous;
  for (int step = 0; step < 5000; ++step) {
    // Mostly a neighbour of the last frame (a sample's usual move), sometimes anywhere or none.
    FrameId leaf;
    if (step % 50 != 49) leaf = FrameId(uint32_t(random() % p.stack_frames.size()));
    std::vector<FunctionId> expected = whole(leaf);
    size_t common = 0;
    while (common < previous.size() && common < expected.size() &&
           previous[common] == expected[common])
      ++common;
    size_t same = path.moveTo(leaf);
    ASSERT_EQ(std::vector<FunctionId>(path.functions().begin(), path.functions().end()), expected)
        << "step " << step;
    ASSERT_EQ(same, common) << "step " << step;
    previous = expected;
  }
}

}  // namespace
}  // namespace hotline::model

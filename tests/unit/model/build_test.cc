// BuildProfile on hand-made RawProfiles with a table resolver: pseudo-entries, inline frames,
// function identity, line entry counts, time = weight × period, thread filter, kept samples.
#include "model/build.h"

#include <gtest/gtest.h>

#include <map>

#include "format/schema.h"
#include "model/invariants.h"
#include "model/merge.h"

namespace hotline::model {
namespace {

using symbolize::ResolvedAddress;
using symbolize::ResolvedFrame;

// Answers from a table keyed by the address actually looked up (address − 1 for return
// addresses, as the symbolizer does); anything else resolves to nothing.
class TableResolver : public AddressResolver {
 public:
  std::map<uint64_t, ResolvedAddress> table;
  std::vector<std::pair<uint64_t, bool>> lookups;

  const ResolvedAddress& resolve(const symbolize::ModuleInfo& module, uint64_t address,
                                 bool is_return_address) override {
    lookups.emplace_back(address, is_return_address);
    uint64_t key = is_return_address ? address - 1 : address;
    auto it = table.find(key);
    if (it != table.end()) return it->second;
    empty_.module = module.path;
    return empty_;
  }
  std::vector<std::string> warnings() const override { return {"a warning from the resolver"}; }

 private:
  ResolvedAddress empty_;
};

ResolvedFrame frame(std::string fn, std::string file, uint32_t line, uint32_t decl_line) {
  ResolvedFrame f;
  f.function = std::move(fn);
  f.file = file;
  f.line = line;
  f.decl_file = std::move(file);
  f.decl_line = decl_line;
  f.source = symbolize::FrameSource::kDwarf;
  return f;
}

class BuildTest : public ::testing::Test {
 protected:
  BuildTest() {
    format::RawProcess process;
    process.period_ns = 1000;
    raw_.process = process;
    format::RawModule exe;
    exe.id = 1;
    exe.path = "/bin/prog";
    exe.start = 0x1000;
    exe.size = 0x1000;
    raw_.modules.push_back(exe);
    format::RawModule lib;
    lib.id = 2;
    lib.path = "/lib/libstripped.so";
    lib.start = 0x8000;
    lib.size = 0x1000;
    raw_.modules.push_back(lib);
    // main at 0x1100 (main.c:10), calling work at 0x1110 (main.c:11, return address 0x1111).
    resolver_.table[0x1100] = {"/bin/prog", 0x1100, {frame("main", "main.c", 10, 9)}};
    resolver_.table[0x1110] = {"/bin/prog", 0x1110, {frame("main", "main.c", 11, 9)}};
    // work at 0x1200 (main.c:20) and 0x1204 (main.c:21).
    resolver_.table[0x1200] = {"/bin/prog", 0x1200, {frame("work", "main.c", 20, 19)}};
    resolver_.table[0x1204] = {"/bin/prog", 0x1204, {frame("work", "main.c", 21, 19)}};
    // 0x1300: helper inlined into work: innermost first.
    resolver_.table[0x1300] = {
        "/bin/prog", 0x1300, {frame("helper", "util.h", 5, 3), frame("work", "main.c", 22, 19)}};
    // Two static functions named `helper`, one in each file.
    resolver_.table[0x1400] = {"/bin/prog", 0x1400, {frame("helper", "other.c", 7, 6)}};
  }

  // Adds a stack (outermost first) to the trie and returns its innermost node.
  uint64_t node(std::vector<uint64_t> addresses) {
    uint64_t parent = 0;
    for (uint64_t address : addresses) {
      uint64_t found = 0;
      for (auto& [id, n] : raw_.stack_nodes)
        if (n.parent == parent && n.address == address) found = id;
      if (!found) {
        found = raw_.stack_nodes.size() + 1;
        raw_.stack_nodes[found] = format::RawStackNode{parent, address};
      }
      parent = found;
    }
    return parent;
  }
  void sample(uint64_t tid, std::vector<uint64_t> addresses, uint64_t weight = 1,
              uint64_t flags = 0) {
    format::SampleRecord s;
    s.time = ++clock_;
    s.tid = tid;
    s.node = addresses.empty() ? 0 : node(addresses);
    s.weight = weight;
    s.flags = flags;
    raw_.samples.push_back(s);
  }
  Profile build(BuildOptions options = {}) {
    Expected<Profile> p = BuildProfile(raw_, resolver_, options);
    EXPECT_TRUE(p.ok()) << p.status().message();
    Status invariants = CheckInvariants(*p);
    EXPECT_TRUE(invariants.ok()) << invariants.message();
    return std::move(*p);
  }
  static const Function* find(const Profile& p, const std::string& name, size_t nth = 0) {
    for (const Function& f : p.functions)
      if (f.name == name && nth-- == 0) return &f;
    return nullptr;
  }
  static const Line* findLine(const Profile& p, const std::string& file, uint32_t line) {
    for (const Line& l : p.lines)
      if (p.file(l.file).path == file && l.line == line) return &l;
    return nullptr;
  }

  format::RawProfile raw_;
  TableResolver resolver_;
  uint64_t clock_ = 0;
};

TEST_F(BuildTest, TimeIsWeightTimesPeriodAndLandsOnTheLeafLine) {
  sample(1, {0x1111, 0x1200});
  sample(1, {0x1111, 0x1200}, 3);  // an overrun: stands for three periods
  sample(1, {0x1111, 0x1204});
  Profile p = build();
  EXPECT_EQ(p.summary.total_ns, 5000u);
  EXPECT_EQ(p.summary.samples, 3u);
  EXPECT_EQ(p.summary.weighted_samples, 5u);
  const Function* work = find(p, "work");
  ASSERT_NE(work, nullptr);
  EXPECT_EQ(work->self_ns, 5000u);
  EXPECT_EQ(work->line, 19u);
  EXPECT_EQ(p.file(work->file).path, "main.c");
  EXPECT_EQ(find(p, "main")->inclusive_ns, 5000u);
  EXPECT_EQ(findLine(p, "main.c", 20)->time_ns, 4000u);
  EXPECT_EQ(findLine(p, "main.c", 21)->time_ns, 1000u);
  // The caller frame was looked up as a return address, the leaf as it is.
  EXPECT_NE(std::find(resolver_.lookups.begin(), resolver_.lookups.end(),
                      std::make_pair(uint64_t{0x1111}, true)),
            resolver_.lookups.end());
  EXPECT_NE(std::find(resolver_.lookups.begin(), resolver_.lookups.end(),
                      std::make_pair(uint64_t{0x1200}, false)),
            resolver_.lookups.end());
}

TEST_F(BuildTest, LineCountsChangesOfLinePerThread) {
  sample(1, {0x1111, 0x1200});  // line 20: +1
  sample(1, {0x1111, 0x1200});  // still 20
  sample(2, {0x1111, 0x1204});  // thread 2 at 21: +1 (thread 1 stays at 20)
  sample(1, {0x1111, 0x1204});  // thread 1 moves to 21: +1
  sample(1, {0x1111, 0x1200});  // back to 20: +1
  Profile p = build();
  EXPECT_EQ(findLine(p, "main.c", 20)->count, 2u);
  EXPECT_EQ(findLine(p, "main.c", 21)->count, 2u);
  EXPECT_EQ(p.threads.size(), 2u);
}

TEST_F(BuildTest, InlinedFunctionsAreFunctionsOfTheirOwn) {
  sample(1, {0x1111, 0x1300});
  Profile p = build();
  const Function* helper = find(p, "helper");
  const Function* work = find(p, "work");
  ASSERT_NE(helper, nullptr);
  ASSERT_NE(work, nullptr);
  EXPECT_EQ(helper->self_ns, 1000u);
  EXPECT_EQ(work->self_ns, 0u);
  EXPECT_EQ(work->inclusive_ns, 1000u);
  EXPECT_EQ(p.summary.max_depth, 3u);  // main → work → helper
  EXPECT_EQ(findLine(p, "util.h", 5)->time_ns, 1000u);
}

TEST_F(BuildTest, StacksKeepEveryFramesLineAndTimePerThread) {
  sample(1, {0x1111, 0x1300});     // main:11 → work:22 → helper (inlined) util.h:5
  sample(1, {0x1111, 0x1300}, 2);  // the same stack, twice the weight
  sample(2, {0x1111, 0x1200});     // main:11 → work:20, on another thread
  Profile p = build();
  ASSERT_EQ(p.stacks.size(), 2u);
  std::vector<std::string> inlined;
  std::vector<StackFrame> frames;
  p.framesOf(StackId(0u), frames);
  for (const StackFrame& f : frames)
    inlined.push_back(p.function(f.function).name + " " + p.file(p.line(f.line).file).path + ":" +
                      std::to_string(p.line(f.line).line) + " " + std::to_string(f.address));
  // The inline levels of one address share it; the caller's frame is at its return address.
  EXPECT_EQ(inlined, (std::vector<std::string>{"main main.c:11 4369", "work main.c:22 4864",
                                               "helper util.h:5 4864"}));
  ASSERT_EQ(p.stack_times.size(), 2u);
  EXPECT_EQ(p.stack_times[0].ns, 3000u);
  EXPECT_EQ(p.stack_times[0].samples, 2u);
  EXPECT_EQ(p.threads[p.stack_times[1].thread].tid, 2u);
  // A calling line's inclusive time holds its callees'; a leaf line's is its own.
  EXPECT_EQ(findLine(p, "main.c", 11)->inclusive_ns, 4000u);
  EXPECT_EQ(findLine(p, "main.c", 11)->time_ns, 0u);
  EXPECT_EQ(findLine(p, "main.c", 22)->inclusive_ns, 3000u);
  EXPECT_EQ(findLine(p, "util.h", 5)->inclusive_ns, 3000u);
  EXPECT_EQ(findLine(p, "main.c", 20)->inclusive_ns, 1000u);
}

TEST_F(BuildTest, ALineInARecursionCountsOncePerSample) {
  // main:11 calls main (the same return address twice), then work.
  sample(1, {0x1111, 0x1111, 0x1200});
  Profile p = build();
  EXPECT_EQ(findLine(p, "main.c", 11)->inclusive_ns, 1000u);
}

TEST_F(BuildTest, SameNameInTwoFilesIsTwoFunctions) {
  sample(1, {0x1111, 0x1300});
  sample(1, {0x1111, 0x1400});
  Profile p = build();
  const Function* first = find(p, "helper", 0);
  const Function* second = find(p, "helper", 1);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(first->file, second->file);
  EXPECT_EQ(first->self_ns + second->self_ns, 2000u);
}

TEST_F(BuildTest, PseudoEntriesTakeWhatCannotBeAttributed) {
  sample(1, {0x1111, 0x9999});              // in no module → [unknown]
  sample(1, {0x1111, 0xffffffff81000000});  // kernel space → [kernel]
  sample(1, {0x1111, 0x8010});              // module without symbols → [libstripped.so]
  sample(1, {0x8010, 0x8020, 0x1200});      // two symbol-less frames make one pseudo-frame
  sample(1, {0x1111, 0x1200}, 1, format::kSampleInRuntime);  // → [profiler]
  sample(1, {});                                             // no frames at all → [unknown]
  Profile p = build();
  EXPECT_EQ(find(p, "[unknown]")->self_ns, 2000u);
  EXPECT_EQ(find(p, "[kernel]")->self_ns, 1000u);
  EXPECT_EQ(find(p, "[libstripped.so]")->self_ns, 1000u);
  EXPECT_EQ(find(p, "[profiler]")->self_ns, 1000u);
  EXPECT_EQ(find(p, "[profiler]")->pseudo, PseudoKind::kProfiler);
  EXPECT_EQ(p.summary.profiler_samples, 1u);
  EXPECT_EQ(p.summary.unknown_samples, 2u);
  const Function* stripped = find(p, "[libstripped.so]");
  EXPECT_EQ(stripped->calls, 2u);  // not a recursion [libstripped.so] → [libstripped.so]
  EXPECT_EQ(stripped->inclusive_ns, 2000u);
  EXPECT_EQ(find(p, "work")->self_ns, 1000u);
  EXPECT_EQ(p.summary.total_ns, 6000u);
}

TEST_F(BuildTest, BrokenStacksKeepTheirKnownFramesUnderAPseudoRoot) {
  sample(1, {0x1111, 0x1200});
  sample(1, {0x1200}, 1, format::kSampleBroken);  // unwinding stopped after the leaf
  sample(1, {0x1111, 0x1204}, 1, format::kSampleTruncated);
  sample(1, {}, 1, format::kSampleBroken);  // nothing known at all
  // A stack whose parent node was lost (in a damaged chunk): also broken.
  raw_.stack_nodes[100] = format::RawStackNode{99, 0x1200};
  format::SampleRecord dangling;
  dangling.tid = 1;
  dangling.node = 100;
  raw_.samples.push_back(dangling);
  Profile p = build();
  EXPECT_EQ(p.summary.broken_samples, 2u);
  EXPECT_EQ(p.summary.truncated_samples, 1u);
  const Function* broken = find(p, "[broken stack]");
  ASSERT_NE(broken, nullptr);
  EXPECT_EQ(broken->inclusive_ns, 3000u);  // the cut stack is not among them
  EXPECT_EQ(broken->self_ns, 1000u);
  const Function* truncated = find(p, "[truncated]");
  ASSERT_NE(truncated, nullptr);
  EXPECT_EQ(truncated->inclusive_ns, 1000u);
  EXPECT_EQ(truncated->self_ns, 0u);
  EXPECT_EQ(find(p, "work")->self_ns, 4000u);  // the known leaves keep their time
}

TEST_F(BuildTest, MissingProcessRecordAssumesAPeriodAndSaysSo) {
  raw_.process.reset();
  sample(1, {0x1111, 0x1200});
  Profile p = build();
  EXPECT_EQ(p.summary.total_ns, kAssumedPeriodNs);
  bool warned = false;
  for (const std::string& w : p.warnings) warned |= w.find("process record") != std::string::npos;
  EXPECT_TRUE(warned);
  EXPECT_NE(std::find(p.warnings.begin(), p.warnings.end(), "a warning from the resolver"),
            p.warnings.end());
}

TEST_F(BuildTest, ThreadFilterAndKeptSamples) {
  sample(1, {0x1111, 0x1200});
  sample(2, {0x1111, 0x1204});
  sample(1, {0x1111, 0x1300});
  sample(1, {0x1100});
  BuildOptions options;
  options.thread = 1;
  options.keep_samples = true;
  Profile p = build(options);
  EXPECT_EQ(p.summary.total_ns, 3000u);
  ASSERT_EQ(p.threads.size(), 1u);
  EXPECT_EQ(p.threads[0].tid, 1u);
  ASSERT_EQ(p.samples.size(), 3u);
  EXPECT_EQ(p.samples[0].popped, 0u);
  EXPECT_EQ(p.samples[0].pushed.size(), 2u);  // main, work
  EXPECT_EQ(p.samples[1].popped, 0u);
  ASSERT_EQ(p.samples[1].pushed.size(), 1u);  // helper, inlined into work
  EXPECT_EQ(p.function(p.samples[1].pushed[0]).name, "helper");
  EXPECT_EQ(p.samples[2].popped, 2u);  // helper and work left
  EXPECT_EQ(p.samples[2].pushed.size(), 0u);
  EXPECT_EQ(p.samples[2].depth, 1u);
  EXPECT_EQ(p.function(p.samples[2].leaf).name, "main");
}

TEST_F(BuildTest, KeptSamplesKnowTheirAddressInTheModule) {
  raw_.modules[1].bias = 0x7000;  // libstripped.so is mapped 0x7000 above its ELF addresses
  sample(1, {0x1111, 0x8010});
  sample(1, {0x9999});
  BuildOptions options;
  options.keep_samples = true;
  Profile p = build(options);
  ASSERT_EQ(p.samples.size(), 2u);
  EXPECT_EQ(p.function(p.samples[0].leaf).name, "[libstripped.so]");
  EXPECT_EQ(p.samples[0].address, 0x8010u);
  ASSERT_TRUE(p.samples[0].module_address.has_value());
  EXPECT_EQ(*p.samples[0].module_address, 0x1010u);
  EXPECT_EQ(p.samples[1].address, 0x9999u);
  EXPECT_FALSE(p.samples[1].module_address.has_value());
}

TEST_F(BuildTest, FilesAreNumberedByPathWithPseudoFilesLast) {
  sample(1, {0x1111, 0x1400});
  sample(1, {0x1111, 0x1300});
  sample(1, {0x9999});
  Profile p = build();
  ASSERT_GE(p.files.size(), 4u);
  EXPECT_EQ(p.files[0].path, "main.c");
  EXPECT_EQ(p.files[1].path, "other.c");
  EXPECT_EQ(p.files[2].path, "util.h");
  EXPECT_EQ(p.files.back().pseudo, PseudoKind::kUnknown);
  for (size_t i = 1; i < p.lines.size(); ++i) {
    bool ordered =
        p.lines[i - 1].file < p.lines[i].file ||
        (p.lines[i - 1].file == p.lines[i].file && p.lines[i - 1].line < p.lines[i].line);
    EXPECT_TRUE(ordered);
  }
}

TEST(InvariantsTest, CatchesASectionThatDoesNotAddUp) {
  Profile p;
  p.summary.total_ns = 10;
  p.functions.push_back(Function{"f", FileId(), 0, ModuleId(), PseudoKind::kNone, 10, 12, 1, 1});
  p.callees.resize(1);
  p.lines.push_back(Line{FileId(0u), 1, 10, 1, 1});
  p.files.push_back(File{"f.c", PseudoKind::kNone, 10, 1, 1});
  p.modules.push_back(Module{"m", PseudoKind::kNone, "m", "", 10, 1});
  p.threads.push_back(Thread{1, "", 10, 0, 1, {}});
  p.lines[0].inclusive_ns = 10;
  p.addStack(std::vector<StackFrame>{StackFrame{.function = FunctionId(0u), .line = LineId(0u), .address = 0x1000}});
  p.stack_times.push_back(StackTime{StackId(0u), 0, 10, 1});
  p.function_lines.push_back(FunctionLine{FunctionId(0u), LineId(0u), 10, 10});
  Status s = CheckInvariants(p);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("inclusive"), std::string::npos) << s.message();
  p.functions[0].inclusive_ns = 10;
  EXPECT_TRUE(CheckInvariants(p).ok());
  p.stack_times[0].ns = 9;
  EXPECT_FALSE(CheckInvariants(p).ok());
  p.stack_times[0].ns = 10;
  p.lines[0].inclusive_ns = 9;
  EXPECT_FALSE(CheckInvariants(p).ok());
  p.lines[0].inclusive_ns = 10;
  p.lines[0].time_ns = 9;
  EXPECT_FALSE(CheckInvariants(p).ok());
}

}  // namespace
}  // namespace hotline::model

namespace hotline::model {
namespace {

// CPU time that no sample stands for is [unsampled], per thread, and the total is the CPU time.
class UnsampledTest : public BuildTest {
 protected:
  UnsampledTest() { raw_.process->sampler = format::Sampler::kPerfTaskClock; }
  void threadEnd(uint64_t tid, std::optional<uint64_t> cpu_ns, std::string name = "") {
    format::RawThread t;
    t.tid = tid;
    t.name = std::move(name);
    t.cpu_ns = cpu_ns;
    raw_.threads.push_back(t);
  }
};

TEST_F(UnsampledTest, CpuTimeBeyondTheSamplesIsUnsampledAndTheTotalIsTheCpuTime) {
  sample(1, {0x1111, 0x1200}, 3);  // 3 µs sampled
  sample(2, {0x1111, 0x1204}, 2);  // 2 µs sampled
  threadEnd(1, 3'400);             // 0.4 µs never sampled
  threadEnd(2, 2'000);             // all of it sampled
  threadEnd(3, 700, "short");      // no sample at all
  Profile p = build();
  const Function* unsampled = find(p, "[unsampled]");
  ASSERT_NE(unsampled, nullptr);
  EXPECT_EQ(unsampled->pseudo, PseudoKind::kUnsampled);
  EXPECT_EQ(unsampled->self_ns, 1'100u);
  EXPECT_EQ(p.summary.total_ns, 6'100u);
  EXPECT_TRUE(p.summary.cpu_compared);
  EXPECT_EQ(p.summary.cpu_ns, 6'100u);
  EXPECT_EQ(p.summary.sampled_ns, 5'000u);
  EXPECT_EQ(p.summary.unsampled_ns, 1'100u);
  for (const Thread& t : p.threads) EXPECT_EQ(t.time_ns, *t.cpu_ns) << "thread " << t.tid;
  // 18% lost: a warning naming the thread that lost most first.
  ASSERT_EQ(p.warnings.size(), 2u);  // and the resolver's
  EXPECT_NE(p.warnings[0].find("[unsampled]"), std::string::npos) << p.warnings[0];
  EXPECT_NE(p.warnings[0].find("3 (short)"), std::string::npos) << p.warnings[0];
  // Restricted to one thread, only that thread's time.
  BuildOptions one;
  one.thread = 1;
  Profile first = build(one);
  EXPECT_EQ(first.summary.total_ns, 3'400u);
  EXPECT_EQ(find(first, "[unsampled]")->self_ns, 400u);
}

TEST_F(UnsampledTest, SmallLossesAreShownButNotWarnedAbout) {
  sample(1, {0x1111, 0x1200}, 100);
  threadEnd(1, 100'400);  // 0.4%: the last partial period
  Profile p = build();
  EXPECT_EQ(find(p, "[unsampled]")->self_ns, 400u);
  EXPECT_EQ(p.warnings.size(), 1u);  // the resolver's only
}

TEST_F(UnsampledTest, UnknownCpuTimeIsSaidNotTakenAsZero) {
  sample(1, {0x1111, 0x1200}, 3);
  threadEnd(1, std::nullopt);
  Profile p = build();
  EXPECT_EQ(find(p, "[unsampled]"), nullptr);
  EXPECT_EQ(p.summary.threads_cpu_unknown, 1u);
  EXPECT_EQ(p.summary.total_ns, 3'000u);
}

TEST_F(UnsampledTest, WallClockAndPausedRunsAreNotComparedWithCpuTime) {
  sample(1, {0x1111, 0x1200}, 3);
  threadEnd(1, 10'000);
  raw_.process->clock = format::ClockMode::kWall;
  EXPECT_FALSE(build().summary.cpu_compared);
  raw_.process->clock = format::ClockMode::kCpu;
  raw_.states.push_back(format::StateRecord{1, 1, 0, format::StateSource::kApi});
  Profile paused = build();
  EXPECT_FALSE(paused.summary.cpu_compared);
  EXPECT_EQ(find(paused, "[unsampled]"), nullptr);
}

// A frame of the runtime between two of the program's is a pass-through shim (a sleep, the
// thread trampoline): it is no frame of the program. Runtime code running innermost is the
// profiler's, and the summary counts exactly the samples of the [profiler] row.
TEST_F(BuildTest, RuntimeShimsAreNoFramesAndProfilerSamplesMatchTheRow) {
  format::RawModule runtime;
  runtime.id = 3;
  runtime.path = "/usr/local/lib/libhotline-rt.so";
  runtime.start = 0xA000;
  runtime.size = 0x1000;
  raw_.modules.push_back(runtime);
  sample(1, {0x1111, 0xA010, 0x1200});  // main → shim → work
  sample(1, {0x1111, 0xA020});          // a hook running: the profiler's
  sample(1, {0x1111, 0x1200}, 1, format::kSampleInRuntime);
  Profile p = build();
  const Function* work = find(p, "work");
  const Function* profiler = find(p, "[profiler]");
  ASSERT_NE(work, nullptr);
  ASSERT_NE(profiler, nullptr);
  EXPECT_EQ(work->self_ns, 1000u);
  EXPECT_EQ(p.summary.max_depth, 2u);  // main → work, no shim between
  EXPECT_EQ(profiler->samples, 2u);
  EXPECT_EQ(p.summary.profiler_samples, profiler->samples);
  for (const CallEdge& e : p.calleesOf(FunctionId(uint32_t(find(p, "main") - &p.functions[0]))))
    EXPECT_TRUE(e.child == FunctionId(uint32_t(work - &p.functions[0])) ||
                e.child == FunctionId(uint32_t(profiler - &p.functions[0])));
}

// Merging runs: the profiles of three runs with different samples, added up by symbol.
class MergeTest : public BuildTest {
 protected:
  // A run of `samples` (each a thread and a stack).
  Profile run(const std::vector<std::pair<uint64_t, std::vector<uint64_t>>>& samples,
              const std::string& build_id = "") {
    raw_.samples.clear();
    raw_.stack_nodes.clear();
    raw_.modules[0].build_id = build_id;
    for (const auto& [tid, stack] : samples) sample(tid, stack);
    return build();
  }
  // Everything merging adds up, in an order that does not depend on the runs' order.
  static std::string Canonical(const Profile& p) {
    std::vector<std::string> rows;
    for (size_t i = 0; i < p.functions.size(); ++i) {
      const Function& f = p.functions[i];
      rows.push_back("f " + f.name + " " + std::to_string(f.self_ns) + " " +
                     std::to_string(f.inclusive_ns) + " " + std::to_string(f.calls));
      for (const CallEdge& e : p.callees[i])
        rows.push_back("e " + f.name + ">" + p.function(e.child).name + " " +
                       std::to_string(e.time_ns) + " " + std::to_string(e.loop_ns) + " " +
                       std::to_string(e.calls));
    }
    for (const Line& l : p.lines)
      rows.push_back("l " + p.file(l.file).path + ":" + std::to_string(l.line) + " " +
                     std::to_string(l.time_ns) + " " + std::to_string(l.count) + " " +
                     std::to_string(l.inclusive_ns));
    for (const StackTime& t : p.stack_times) {
      std::string frames;
      std::vector<StackFrame> stack;
      p.framesOf(t.stack, stack);
      for (const StackFrame& f : stack) frames += p.function(f.function).name + ";";
      rows.push_back("s " + frames + " " + std::to_string(p.threads[t.thread].tid) + " " +
                     std::to_string(t.ns));
    }
    rows.push_back("total " + std::to_string(p.summary.total_ns) + " samples " +
                   std::to_string(p.summary.samples));
    std::sort(rows.begin(), rows.end());
    std::string text;
    for (const std::string& r : rows) text += r + "\n";
    return text;
  }
  static Profile Merged(std::vector<const Profile*> runs, MergeOptions options = {}) {
    Expected<Profile> merged = MergeProfiles(runs, options);
    EXPECT_TRUE(merged.ok()) << merged.status().message();
    Status invariants = CheckInvariants(*merged);
    EXPECT_TRUE(invariants.ok()) << invariants.message();
    return std::move(*merged);
  }
};

TEST_F(MergeTest, RunsAddUpAndKeepTheInvariants) {
  Profile a = run({{1, {0x1111, 0x1200}}, {1, {0x1111, 0x1300}}});
  Profile b = run({{1, {0x1111, 0x1204}}, {2, {0x1111, 0x1200}}, {2, {0x1111, 0x1200}}});
  Profile m = Merged({&a, &b});
  EXPECT_EQ(m.summary.total_ns, a.summary.total_ns + b.summary.total_ns);
  EXPECT_EQ(find(m, "work")->self_ns, 4000u);
  EXPECT_EQ(find(m, "main")->inclusive_ns, 5000u);
  EXPECT_EQ(findLine(m, "main.c", 20)->time_ns, 3000u);
  EXPECT_EQ(findLine(m, "main.c", 11)->inclusive_ns, 5000u);
  EXPECT_EQ(m.threads.size(), 3u);  // the runs' threads stay apart
}

TEST_F(MergeTest, KeepsEachRowsSpreadOverTheRuns) {
  Profile a = run({{1, {0x1111, 0x1200}}, {1, {0x1111, 0x1300}}});
  Profile b = run({{1, {0x1111, 0x1204}}, {2, {0x1111, 0x1200}}, {2, {0x1111, 0x1200}}});
  Profile m = Merged({&a, &b});
  EXPECT_EQ(m.summary.runs, 2u);
  EXPECT_EQ(a.summary.runs, 1u);
  for (const Function& f : m.functions) {
    const Function* fa = find(a, f.name);
    const Function* fb = find(b, f.name);
    uint64_t ta = fa ? fa->self_ns : 0, tb = fb ? fb->self_ns : 0;
    EXPECT_EQ(f.spread.min_ns, std::min(ta, tb)) << f.name;
    EXPECT_EQ(f.spread.max_ns, std::max(ta, tb)) << f.name;
    EXPECT_EQ(f.spread.sum_squares, double(ta) * double(ta) + double(tb) * double(tb)) << f.name;
  }
  // A line only one run has: the other counts 0.
  const Line* only_a = findLine(m, "util.h", 5);  // 0x1300, in run a only
  ASSERT_NE(only_a, nullptr);
  EXPECT_EQ(only_a->spread.min_ns, 0u);
  EXPECT_EQ(only_a->spread.max_ns, only_a->time_ns);
}

TEST_F(MergeTest, IsAssociativeAndCommutative) {
  Profile a = run({{1, {0x1111, 0x1200}}, {1, {0x1111, 0x1300}}, {1, {0x1400}}});
  Profile b = run({{1, {0x1111, 0x1204}}, {2, {0x1111, 0x1111, 0x1200}}});
  Profile c = run({{3, {0x1111, 0x1300}}, {3, {0x1111, 0x1200}}, {3, {}}});
  Profile ab = Merged({&a, &b}), bc = Merged({&b, &c}), ba = Merged({&b, &a});
  Profile ab_c = Merged({&ab, &c}), a_bc = Merged({&a, &bc});
  EXPECT_EQ(Canonical(ab_c), Canonical(a_bc));
  EXPECT_EQ(Canonical(ab), Canonical(ba));
  EXPECT_EQ(Canonical(Merged({&a, &b, &c})), Canonical(ab_c));
}

TEST_F(MergeTest, DifferentProgramsOnlyWhenForced) {
  Profile a = run({{1, {0x1111, 0x1200}}});
  raw_.process->exe = "/bin/other";
  Profile b = run({{1, {0x1111, 0x1200}}});
  Expected<Profile> refused = MergeProfiles({&a, &b});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("different programs"), std::string::npos);
  MergeOptions force;
  force.force = true;
  EXPECT_EQ(Merged({&a, &b}, force).summary.total_ns, 2000u);
}

TEST_F(MergeTest, TwoBuildsMeetByFunctionAndLineWithAWarning) {
  Profile a = run({{1, {0x1111, 0x1200}}}, "build-1");
  Profile b = run({{1, {0x1111, 0x1200}}}, "build-2");
  Profile m = Merged({&a, &b});
  EXPECT_EQ(find(m, "work")->self_ns, 2000u);
  EXPECT_EQ(find(m, "work", 1), nullptr);  // one function, not one per build
  std::string warnings;
  for (const std::string& w : m.warnings) warnings += w + "\n";
  EXPECT_NE(warnings.find("different builds of /bin/prog"), std::string::npos) << warnings;
}

}  // namespace
}  // namespace hotline::model

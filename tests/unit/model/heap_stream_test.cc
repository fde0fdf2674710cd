// LoadHeapProfile (the heap built while the file is read) against BuildHeapProfile (from every
// record in memory) and against the truth of a run made up here: three threads allocating,
// freeing each other's blocks and reusing each other's addresses, written the way the runtime's
// per-thread rings write them (each thread in time order, the threads a drain apart), so the
// reader must put the events back into the program's order. Also damaged files.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "format/raw_profile.h"
#include "format/writer.h"
#include "heap_text.h"
#include "model/heap.h"

namespace hotline::model {
namespace {

using format::AllocKind;
using format::FreeKind;
using testing::HeapText;

// Every address in the program's module is a function of its own at a line of prog.c.
class ProgramResolver : public AddressResolver {
 public:
  const symbolize::ResolvedAddress& resolve(const symbolize::ModuleInfo& module, uint64_t address,
                                            bool is_return_address) override {
    uint64_t at = is_return_address ? address - 1 : address;
    auto [it, added] = table_.try_emplace(at);
    if (added) {
      symbolize::ResolvedFrame f;
      f.function = "fn_" + std::to_string(at >> 4);
      f.file = "/src/prog.c";
      f.line = uint32_t(at & 0xff);
      f.decl_file = f.file;
      f.decl_line = uint32_t(at >> 4);
      it->second = {module.path, at, {f}};
    }
    return it->second;
  }
  std::vector<std::string> warnings() const override { return {}; }

 private:
  std::map<uint64_t, symbolize::ResolvedAddress> table_;
};

std::string TempPath(const std::string& name) {
  const char* tmp = getenv("TMPDIR");
  return std::string(tmp ? tmp : "/tmp") + "/hotline-heap-stream-" + std::to_string(getpid()) +
         "-" + name;
}

// What the made-up run did, in the program's order.
struct Truth {
  uint64_t events = 0, alloc_calls = 0, total_bytes = 0, free_calls = 0, peak_bytes = 0;
  uint64_t leaked_calls = 0, leaked_bytes = 0, unknown_frees = 0, mmap_calls = 0;
};

struct Event {
  bool is_alloc;
  format::AllocRecord alloc;
  format::FreeRecord free;
};

// Writes a run of `events` heap events of three threads to `path`. Times rise by one between
// events, except that an allocation may share its time with the release just before it (the
// runtime stamps a release before the block can be reused, so that is its order). Sampled
// (`sample_bytes` ≠ 0): every allocation carries it, and the STATS record says so.
Truth WriteRun(const std::string& path, int events, uint64_t sample_bytes, unsigned seed) {
  std::mt19937_64 random(seed);
  auto chance = [&](int percent) { return int(random() % 100) < percent; };
  constexpr int kThreads = 3;
  const uint64_t tids[kThreads] = {101, 102, 103};

  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  EXPECT_GE(fd, 0) << path;
  format::Writer w;
  EXPECT_TRUE(w.begin(fd, format::kFeatureHeap));
  uint8_t build_id[4] = {1, 2, 3, 4};
  w.add(format::ModuleLoadRecord{10, 1, w.internString("/work/prog"), 0, 0x1000, 0x1000, 0,
                                 build_id, 4});
  if (sample_bytes)
    w.add(format::StatsRecord{10, w.internString("heap_sample_bytes"), sample_bytes});
  for (uint64_t tid : tids) w.add(format::ThreadStartRecord{10, tid, w.internString("t"), 0});
  // Six stacks, outermost frame first; the runtime interns a stack when it first writes it.
  std::vector<std::vector<uint64_t>> stacks;
  for (int s = 0; s < 6; ++s)
    stacks.push_back({0x1100, 0x1200 + uint64_t(s % 3) * 0x10, 0x1400 + uint64_t(s) * 0x20});
  auto node = [&](int s) {
    uint64_t n = 0;
    for (uint64_t address : stacks[size_t(s)]) n = w.internStackNode(n, address);
    return n;
  };

  Truth truth;
  struct Block {
    uint64_t size;
    bool mmap;
  };
  std::map<uint64_t, Block> live;
  std::vector<uint64_t> freed;  // addresses free for reuse, by any thread
  uint64_t next_address = 0x100000, current = 0, time = 1000;
  bool last_was_free = false;
  std::vector<std::vector<Event>> rings(kThreads);

  auto take_time = [&](bool is_alloc) {
    if (!(is_alloc && last_was_free && chance(30))) ++time;
    last_was_free = !is_alloc;
    return time;
  };
  auto allocate = [&](int thread, AllocKind kind) {
    uint64_t address;
    if (!freed.empty() && chance(60)) {
      size_t i = random() % freed.size();
      address = freed[i];
      freed[i] = freed.back();
      freed.pop_back();
    } else {
      address = next_address;
      next_address += 0x10000;
    }
    uint64_t size = chance(2) ? 100000 + random() % 100000 : 1 + random() % 3000;
    bool mmap = kind == AllocKind::kMmap;
    Event e{true, {}, {}};
    e.alloc = format::AllocRecord{
        take_time(true),        tids[thread], address, size, uint64_t(random() % 6), kind,
        mmap ? 0 : sample_bytes};
    rings[size_t(thread)].push_back(e);
    live[address] = Block{size, mmap};
    if (mmap) {
      ++truth.mmap_calls;
    } else {
      ++truth.alloc_calls;
      truth.total_bytes += size;
      current += size;
      truth.peak_bytes = std::max(truth.peak_bytes, current);
    }
  };
  auto release = [&](int thread, uint64_t address, FreeKind kind) {
    Event e{false, {}, {}};
    e.free = format::FreeRecord{take_time(false), tids[thread], address, kind, 0};
    rings[size_t(thread)].push_back(e);
    auto it = live.find(address);
    if (it == live.end()) {
      ++truth.unknown_frees;
      return;
    }
    if (!it->second.mmap) {
      current -= it->second.size;
      if (kind != FreeKind::kRealloc) ++truth.free_calls;
    }
    live.erase(it);
    freed.push_back(address);
  };
  auto write = [&](int thread) {
    for (Event& e : rings[size_t(thread)]) {
      if (e.is_alloc) {
        e.alloc.node = node(int(e.alloc.node));  // the stack's index, until written
        w.add(e.alloc);
      } else {
        w.add(e.free);
      }
    }
    rings[size_t(thread)].clear();
  };

  int made = 0;
  int stalled_until[kThreads] = {0, 0, 0};
  // More allocations than releases in the first third: the peak comes early, and many blocks
  // live at it are released later.
  while (made < events) {
    int thread = int(random() % kThreads);
    int what = int(random() % 100);
    bool grow = made < events / 3;
    if (live.empty() || what < (grow ? 70 : 48)) {
      allocate(thread, chance(10) ? AllocKind::kNew : AllocKind::kMalloc);
      ++made;
    } else if (what < 94) {
      auto it = live.begin();
      std::advance(it, random() % live.size());
      if (it->second.mmap) {
        release(thread, it->first, FreeKind::kMunmap);
      } else {
        release(thread, it->first, chance(10) ? FreeKind::kDelete : FreeKind::kFree);
      }
      ++made;
    } else if (what < 97) {  // realloc: the old block's release, then the new block
      auto it = live.begin();
      std::advance(it, random() % live.size());
      if (it->second.mmap) continue;
      release(thread, it->first, FreeKind::kRealloc);
      allocate(thread, AllocKind::kRealloc);
      made += 2;
    } else if (what < 98) {
      allocate(thread, AllocKind::kMmap);
      ++made;
    } else {  // a block allocated before recording
      release(thread, 0x7f0000000000 + uint64_t(made) * 16, FreeKind::kFree);
      ++made;
    }
    // A drain of the rings, in an order of its own, missing a thread now and then (it was
    // still writing) and, rarely, one for thousands of events (it was descheduled); or one
    // thread's full ring.
    if (random() % 5000 == 0) stalled_until[random() % kThreads] = made + 6000;
    if (chance(2)) {
      int order[kThreads] = {0, 1, 2};
      std::shuffle(order, order + kThreads, random);
      for (int t : order)
        if (stalled_until[t] <= made && chance(80)) write(t);
    } else if (chance(1)) {
      write(int(random() % kThreads));
    }
    if (chance(1)) {
      EXPECT_TRUE(w.flush());
    }
  }
  for (int t = kThreads; t-- > 0;) write(t);
  w.add(format::EndRecord{time + 1, format::EndHow::kExit, 0});
  EXPECT_TRUE(w.flush());
  EXPECT_FALSE(w.failed()) << w.error();
  close(fd);
  truth.events = uint64_t(made);
  for (const auto& [address, block] : live) {
    if (block.mmap) continue;
    ++truth.leaked_calls;
    truth.leaked_bytes += block.size;
  }
  return truth;
}

// The heap of the file at `path` both ways, which must be the same.
HeapProfile BothWays(const std::string& path, format::ReadStats* stats = nullptr) {
  Expected<format::RawProfile> raw = format::LoadRawProfile(path, nullptr);
  EXPECT_TRUE(raw.ok()) << raw.status().message();
  ProgramResolver whole_resolver, stream_resolver;
  Expected<HeapProfile> whole = BuildHeapProfile(*raw, whole_resolver);
  EXPECT_TRUE(whole.ok()) << whole.status().message();
  Expected<HeapLoad> streamed = LoadHeapProfile(path, stream_resolver);
  EXPECT_TRUE(streamed.ok()) << streamed.status().message();
  EXPECT_TRUE(streamed->heap.ok()) << streamed->heap.status().message();
  EXPECT_EQ(HeapText(*streamed->heap), HeapText(*whole));
  if (stats) *stats = streamed->stats;
  return std::move(*streamed->heap);
}

TEST(HeapStream, ThreadsADrainApartAreReplayedInTheProgramsOrder) {
  std::string path = TempPath("threads.hotline");
  Truth truth = WriteRun(path, 60000, 0, 1);
  HeapProfile heap = BothWays(path);
  EXPECT_EQ(heap.alloc_calls, truth.alloc_calls);
  EXPECT_EQ(heap.total_bytes, truth.total_bytes);
  EXPECT_EQ(heap.free_calls, truth.free_calls);
  EXPECT_EQ(heap.peak_bytes, truth.peak_bytes);
  EXPECT_EQ(heap.leaked_calls, truth.leaked_calls);
  EXPECT_EQ(heap.leaked_bytes, truth.leaked_bytes);
  EXPECT_EQ(heap.unknown_frees, truth.unknown_frees);
  EXPECT_EQ(heap.mmap_calls, truth.mmap_calls);
  // The sites' parts of the peak add up to it; the leaks' to what leaked.
  uint64_t at_peak = 0, leaked = 0;
  for (const HeapSite& s : heap.sites) at_peak += s.peak_bytes;
  for (const HeapLeak& l : heap.leaks) leaked += l.bytes;
  EXPECT_EQ(at_peak, heap.peak_bytes);
  EXPECT_EQ(leaked, heap.leaked_bytes);
  // About 1000 points, the last one after the last event.
  EXPECT_GE(heap.timeline.size(), 500u);
  EXPECT_LE(heap.timeline.size(), 1100u);
  unlink(path.c_str());
}

TEST(HeapStream, SampledRunsAreTheSameBothWays) {
  std::string path = TempPath("sampled.hotline");
  Truth truth = WriteRun(path, 20000, 4096, 2);
  HeapProfile heap = BothWays(path);
  EXPECT_EQ(heap.sample_bytes, 4096u);
  EXPECT_EQ(heap.sampled_calls, truth.alloc_calls);
  EXPECT_GT(heap.alloc_calls, truth.alloc_calls);  // each stands for more than one
  EXPECT_EQ(heap.temporary_calls, 0u);
  unlink(path.c_str());
}

// Begins a forged heap profile at `path`, of a program /work/prog loaded at 0x1000; returns the
// descriptor `w` writes to, or -1.
int BeginForgedHeapProfile(const std::string& path, format::Writer& w) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || !w.begin(fd, format::kFeatureHeap)) return -1;
  uint8_t build_id[1] = {9};
  w.add(format::ModuleLoadRecord{1, 1, w.internString("/work/prog"), 0, 0x1000, 0x1000, 0, build_id,
                                 1});
  return fd;
}

// A forged file whose events come in reverse time order: each is held until the file's end, and
// the heap is still the program's.
TEST(HeapStream, EventsInReverseTimeOrderAreHeldUntilTheirTurn) {
  std::string path = TempPath("reverse.hotline");
  format::Writer w;
  int fd = BeginForgedHeapProfile(path, w);
  ASSERT_GE(fd, 0);
  uint64_t node = w.internStackNode(w.internStackNode(0, 0x1100), 0x1480);
  // The program: block i allocated at 10 + 2i; the even ones freed at 11 + 2i, the odd leaked.
  constexpr uint64_t kBlocks = 10000;
  for (uint64_t i = kBlocks; i-- > 0;) {
    if (i % 2 == 0) w.add(format::FreeRecord{11 + 2 * i, 7, 0x100000 + i * 64, FreeKind::kFree, 0});
    w.add(format::AllocRecord{10 + 2 * i, 7, 0x100000 + i * 64, 1 + i % 100, node,
                              AllocKind::kMalloc});
    if (i % 1000 == 0) {
      ASSERT_TRUE(w.flush());
    }
  }
  ASSERT_TRUE(w.flush());
  close(fd);
  HeapProfile heap = BothWays(path);
  EXPECT_EQ(heap.alloc_calls, kBlocks);
  EXPECT_EQ(heap.free_calls, kBlocks / 2);
  EXPECT_EQ(heap.temporary_calls, kBlocks / 2);
  EXPECT_EQ(heap.leaked_calls, kBlocks / 2);
  uint64_t leaked = 0;
  for (uint64_t i = 1; i < kBlocks; i += 2) leaked += 1 + i % 100;
  EXPECT_EQ(heap.leaked_bytes, leaked);
  EXPECT_EQ(heap.peak_bytes, leaked);  // reached at the last allocation
  EXPECT_EQ(heap.unknown_frees, 0u);
  unlink(path.c_str());
}

// A thread whose events reach the file long after the other thread's later ones (its ring was
// drained more than a quarter of a second late): the one reading's guess fails, and the file is
// read again the exact way, with the program's heap as the result.
TEST(HeapStream, AThreadWrittenLongAfterItsTimeIsStillInTheProgramsOrder) {
  std::string path = TempPath("late.hotline");
  format::Writer w;
  int fd = BeginForgedHeapProfile(path, w);
  ASSERT_GE(fd, 0);
  uint64_t node = w.internStackNode(w.internStackNode(0, 0x1100), 0x1480);
  constexpr uint64_t kMs = 1'000'000;
  // Thread 1: a block of 100 bytes each millisecond for a second, freed a millisecond later.
  for (uint64_t i = 0; i < 1000; ++i) {
    w.add(format::AllocRecord{1000 * kMs + i * kMs, 1, 0x100000 + (i % 8) * 256, 100, node,
                              AllocKind::kMalloc});
    w.add(format::FreeRecord{1000 * kMs + i * kMs + kMs / 2, 1, 0x100000 + (i % 8) * 256,
                             FreeKind::kFree, 0});
  }
  // Thread 2, written last: ten blocks of 5000 bytes, allocated at 0.5 s and kept to the end.
  for (uint64_t i = 0; i < 10; ++i)
    w.add(format::AllocRecord{1500 * kMs + i, 2, 0x200000 + i * 8192, 5000, node,
                              AllocKind::kMalloc});
  ASSERT_TRUE(w.flush());
  close(fd);
  HeapProfile heap = BothWays(path);
  EXPECT_EQ(heap.alloc_calls, 1010u);
  EXPECT_EQ(heap.free_calls, 1000u);
  EXPECT_EQ(heap.peak_bytes, 50100u);           // thread 2's blocks and one of thread 1's
  EXPECT_EQ(heap.peak_time_ns, 500 * kMs + 9);  // at thread 2's last allocation
  EXPECT_EQ(heap.leaked_bytes, 50000u);
  unlink(path.c_str());
}

// The timeline of a long run keeps between 512 and 1024 points at a regular step, and its last
// point is the last event's.
TEST(HeapStream, TheTimelineOfManyEventsIsThinnedToARegularStep) {
  std::string path = TempPath("timeline.hotline");
  format::Writer w;
  int fd = BeginForgedHeapProfile(path, w);
  ASSERT_GE(fd, 0);
  uint64_t node = w.internStackNode(0, 0x1100);
  // 100,001 allocations of 1 byte, one per nanosecond from time 10, none freed: after event i
  // the heap holds i + 1 bytes.
  constexpr uint64_t kEvents = 100001;
  for (uint64_t i = 0; i < kEvents; ++i)
    w.add(format::AllocRecord{10 + i, 1, 0x100000 + i * 16, 1, node, AllocKind::kMalloc});
  ASSERT_TRUE(w.flush());
  close(fd);
  HeapProfile heap = BothWays(path);
  ASSERT_GE(heap.timeline.size(), 512u);
  ASSERT_LE(heap.timeline.size(), 1025u);
  uint64_t step = heap.timeline[1].time_ns - heap.timeline[0].time_ns;
  EXPECT_EQ(step & (step - 1), 0u);  // a power of two
  for (size_t i = 0; i + 1 < heap.timeline.size(); ++i) {
    EXPECT_EQ(heap.timeline[i].time_ns, i * step);
    EXPECT_EQ(heap.timeline[i].bytes, i * step + 1);
  }
  EXPECT_EQ(heap.timeline.back().time_ns, kEvents - 1);
  EXPECT_EQ(heap.timeline.back().bytes, kEvents);
  unlink(path.c_str());
}

TEST(HeapStream, DamagedFilesGiveWhatCouldBeReadBothWays) {
  std::string path = TempPath("whole.hotline");
  Truth truth = WriteRun(path, 30000, 0, 3);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(bytes.size(), 4096u);
  auto write = [](const std::string& to, const std::string& content) {
    std::ofstream(to, std::ios::binary) << content;
  };

  // Cut short: the complete chunks are read, the rest reported.
  std::string cut = TempPath("cut.hotline");
  write(cut, bytes.substr(0, bytes.size() * 3 / 5));
  format::ReadStats stats;
  HeapProfile heap = BothWays(cut, &stats);
  EXPECT_GT(stats.truncated_bytes, 0u);
  EXPECT_GT(heap.alloc_calls, 0u);
  EXPECT_LT(heap.alloc_calls + heap.mmap_calls, truth.alloc_calls + truth.mmap_calls);

  // A byte flipped in the middle: that chunk is dropped, the others read.
  std::string flipped = TempPath("flipped.hotline");
  std::string damaged = bytes;
  damaged[damaged.size() / 2] = char(damaged[damaged.size() / 2] ^ 0x55);
  write(flipped, damaged);
  heap = BothWays(flipped, &stats);
  EXPECT_EQ(stats.damaged_chunks, 1u);

  // Not a profile at all: the reading fails, with the file's name.
  std::string garbage = TempPath("garbage.hotline");
  write(garbage, "this is not a profile");
  ProgramResolver resolver;
  Expected<HeapLoad> none = LoadHeapProfile(garbage, resolver);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find(garbage), std::string::npos);
  EXPECT_NE(none.status().message().find("not a hotline profile"), std::string::npos);
  Expected<HeapLoad> missing = LoadHeapProfile(TempPath("missing.hotline"), resolver);
  EXPECT_FALSE(missing.ok());
  for (const std::string& p : {path, cut, flipped, garbage}) unlink(p.c_str());
}

TEST(HeapStream, AProfileWithoutHeapRecordsSaysSo) {
  std::string path = TempPath("none.hotline");
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  format::Writer w;
  ASSERT_TRUE(w.begin(fd, format::kFeatureSamples));
  w.add(format::EndRecord{5, format::EndHow::kExit, 0});
  ASSERT_TRUE(w.flush());
  close(fd);
  ProgramResolver resolver;
  Expected<HeapLoad> loaded = LoadHeapProfile(path, resolver);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  ASSERT_FALSE(loaded->heap.ok());
  EXPECT_NE(loaded->heap.status().message().find("no heap records"), std::string::npos);
  unlink(path.c_str());
}

}  // namespace
}  // namespace hotline::model

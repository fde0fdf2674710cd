// End to end for the heap collector: programs that make known allocations are recorded with
// `hotline record --heap` and every number the heap report gives is checked exactly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

#include "harness.h"

namespace hotline {
namespace {

using testing::Execute;
using testing::Hotline;
using testing::Load;
using testing::ProfilesIn;
using testing::RunResult;
using testing::ScratchDir;

// `hotline report -H -m`: key → value.
std::map<std::string, uint64_t> HeapSummary(const std::string& profile, const std::string& dir) {
  RunResult r = Hotline({"report", "-H", "-m", profile}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, uint64_t> values;
  std::istringstream in(r.out);
  std::string key;
  uint64_t value;
  while (in >> key >> value) values[key] = value;
  return values;
}

std::string RecordHeap(const std::string& name, const std::string& program, RunResult* run) {
  std::string dir = ScratchDir(name);
  std::string profile = dir + "/" + name + ".hotline";
  *run = Hotline({"record", "-q", "--heap", "-o", profile, "--", program}, dir);
  EXPECT_EQ(run->exit_code, 0) << run->err;
  return profile;
}

TEST(Heap, KnownAllocationsAreReportedExactly) {
  RunResult run;
  std::string profile = RecordHeap("heap_known", PROGRAM_heap_known, &run);
  EXPECT_EQ(run.out, "heap_known done\n");
  auto h = HeapSummary(profile, ScratchDir("heap_known_report"));
  // 10 calloc + 1 memalign + 100 malloc + malloc and 2 reallocs + posix_memalign +
  // aligned_alloc + valloc + the 1 MiB block.
  EXPECT_EQ(h["alloc_calls"], 118u);
  EXPECT_EQ(h["total_bytes"], 1000u + 48 + 100 * 32 + 16 + 64 + 256 + 64 + 128 + 100 + (1u << 20));
  // 100 frees + the realloc chain's end + posix_memalign + aligned_alloc + valloc + 1 MiB; the
  // blocks realloc released are not free calls.
  EXPECT_EQ(h["free_calls"], 105u);
  // Each of those 105 was freed before its thread allocated anything else.
  EXPECT_EQ(h["temporary_calls"], 105u);
  EXPECT_EQ(h["leaked_bytes"], 1048u);
  EXPECT_EQ(h["leaked_calls"], 11u);
  // At the 1 MiB block, only the leaked blocks were live besides it.
  EXPECT_EQ(h["peak_bytes"], 1048u + (1u << 20));
}

TEST(Heap, KnownAllocationsAgreeWithHeaptrack) {
  if (system("command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null") != 0)
    GTEST_SKIP() << "heaptrack is not installed";
  std::string dir = ScratchDir("heaptrack");
  RunResult ht = Execute({"/usr/bin/env", "heaptrack", "-o", dir + "/ht", PROGRAM_heap_known}, dir);
  ASSERT_EQ(ht.exit_code, 0) << ht.err;
  RunResult printed =
      Execute({"/usr/bin/env", "heaptrack_print", "--print-leaks=0", dir + "/ht.zst"}, dir);
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  size_t at = printed.out.find("calls to allocation functions: ");
  ASSERT_NE(at, std::string::npos) << printed.out;
  uint64_t heaptrack_calls = std::strtoull(printed.out.c_str() + at + 31, nullptr, 10);
  RunResult run;
  auto h = HeapSummary(RecordHeap("heap_known_vs", PROGRAM_heap_known, &run), dir);
  EXPECT_EQ(h["alloc_calls"], heaptrack_calls);
}

TEST(Heap, CppNewAndDeleteInAllTheirForms) {
  RunResult run;
  std::string profile = RecordHeap("heap_cpp", PROGRAM_heap_cpp, &run);
  format::RawProfile p = Load(profile);
  std::map<std::pair<format::AllocKind, uint64_t>, int> allocs;
  for (const auto& a : p.allocs) ++allocs[{a.kind, a.size}];
  EXPECT_EQ((allocs[{format::AllocKind::kNew, 8}]), 50);
  EXPECT_EQ((allocs[{format::AllocKind::kNewArray, 40}]), 20);
  EXPECT_EQ((allocs[{format::AllocKind::kNewArray, 3}]), 1);
  EXPECT_EQ((allocs[{format::AllocKind::kNew, 128}]), 1);
  EXPECT_EQ((allocs[{format::AllocKind::kNewArray, 100}]), 1);
  int deletes = 0, array_deletes = 0;
  for (const auto& f : p.frees) {
    deletes += f.kind == format::FreeKind::kDelete;
    array_deletes += f.kind == format::FreeKind::kDeleteArray;
  }
  EXPECT_EQ(deletes, 51);
  EXPECT_EQ(array_deletes, 21);
  auto h = HeapSummary(profile, ScratchDir("heap_cpp_report"));
  EXPECT_EQ(h["leaked_bytes"], 100u);
  EXPECT_EQ(h["leaked_calls"], 1u);
}

// The row of `report` whose site column contains `text`: its cells split on runs of spaces
// before the site (bytes and units stay together: "63.97 KiB").
std::string RowWith(const std::string& report, const std::string& text) {
  std::istringstream in(report);
  for (std::string line; std::getline(in, line);)
    if (line.find(text) != std::string::npos) return line;
  return "";
}

// The calls column of a site or chain row: the number after the bytes.
uint64_t CallsOf(const std::string& row) {
  std::istringstream in(row);
  std::string number, unit;
  uint64_t calls = 0;
  in >> number >> unit >> calls;
  return calls;
}

TEST(Heap, SitesAreTheProgramsOwnLinesWithTheirCallers) {
  RunResult run;
  std::string profile = RecordHeap("heap_sites", PROGRAM_heap_sites, &run);
  std::string dir = ScratchDir("heap_sites_report");
  RunResult r = Hotline({"report", "-H", profile}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find('\t'), std::string::npos) << "a TAB in the tables for people";
  // The vector's growth is pinned on crunch's line, through push_back; not on the allocator.
  std::string site = RowWith(r.out, "std::vector<…>::push_back from analytics::crunch (");
  ASSERT_NE(site, "") << r.out;
  EXPECT_NE(site.find("heap_sites.cc:13)"), std::string::npos) << site;
  EXPECT_EQ(r.out.find("new_allocator.h"), std::string::npos) << r.out;
  // 1000 push_backs grow the vector 11 times (1, 2, 4, ... 1024): 3 crunches from stage_a,
  // one from stage_b, each chain up to main.
  EXPECT_EQ(CallsOf(site), 44u) << site;
  std::string from_a = RowWith(r.out, "← stage_a (");
  std::string from_b = RowWith(r.out, "← stage_b (");
  EXPECT_EQ(CallsOf(from_a), 33u) << r.out;
  EXPECT_EQ(CallsOf(from_b), 11u) << r.out;
  EXPECT_NE(from_a.find("← main ("), std::string::npos) << from_a;
  // Chains end at main: libc's start-up above it is left out.
  std::string sites = r.out.substr(0, r.out.find("Leaks"));
  EXPECT_EQ(sites.find("__libc_start"), std::string::npos) << sites;
  // std::string's buffers: at label_length's line, through the string's constructor.
  std::string label = RowWith(r.out, " from label_length (");
  EXPECT_NE(label.find("basic_string"), std::string::npos) << r.out;
  EXPECT_EQ(CallsOf(label), 10u) << label;

  // --allocator-frames: the allocator's caller as recorded.
  RunResult raw = Hotline({"report", "-H", "--allocator-frames", profile}, dir);
  ASSERT_EQ(raw.exit_code, 0) << raw.err;
  EXPECT_NE(raw.out.find("new_allocator.h"), std::string::npos) << raw.out;
  // --full-names: the whole template arguments.
  RunResult full = Hotline({"report", "-H", "--full-names", profile}, dir);
  EXPECT_NE(full.out.find("std::vector<long, std::allocator<long> >::push_back"), std::string::npos)
      << full.out;
}

TEST(Heap, ThreadsAllocatingAtOnceAreCountedExactly) {
  RunResult run;
  format::RawProfile p = Load(RecordHeap("heap_threads", PROGRAM_heap_threads, &run));
  std::map<uint64_t, int> per_thread;
  for (const auto& a : p.allocs)
    if (a.size == 24) ++per_thread[a.tid];
  ASSERT_EQ(per_thread.size(), 4u);
  for (const auto& [tid, calls] : per_thread) EXPECT_EQ(calls, 10000) << "thread " << tid;
  uint64_t frees = 0;
  for (const auto& f : p.frees) frees += f.kind == format::FreeKind::kFree;
  EXPECT_GE(frees, 40000u);
}

TEST(Heap, ForkWhileAnotherThreadAllocates) {
  RunResult run;
  std::string profile = RecordHeap("heap_fork", PROGRAM_heap_fork, &run);
  EXPECT_EQ(run.out, "heap_fork done\n");
  std::string dir = profile.substr(0, profile.rfind('/'));
  std::vector<std::string> profiles = ProfilesIn(dir);
  ASSERT_EQ(profiles.size(), 6u);  // the parent and five children
  for (const std::string& path : profiles) {
    if (path == profile) continue;
    format::RawProfile child = Load(path);
    int own = 0;
    for (const auto& a : child.allocs) own += a.size == 72;
    EXPECT_EQ(own, 10) << path;
  }
}

TEST(Heap, ReportWithoutHeapRecordsSaysSo) {
  std::string dir = ScratchDir("heap_none");
  std::string profile = dir + "/none.hotline";
  ASSERT_EQ(Hotline({"record", "-q", "-o", profile, "--", PROGRAM_heap_known}, dir).exit_code, 0);
  RunResult r = Hotline({"report", "-H", profile}, dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no heap records"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace hotline

// Values no recorded run can have (docs/format.md, "Bounds"): each makes its record malformed,
// reported as damage, and the records around it still read. Every bounded field is tried at its
// bound (read as it is) and one past it (the record dropped), so each case shows the bound is
// where the format says, not merely that some record was dropped.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "format/byte_buffer.h"
#include "format/raw_profile.h"
#include "format/reader.h"
#include "format/schema.h"
#include "format/writer.h"
#include "read_bytes.h"
#include "sample_profile.h"

namespace hotline {
namespace {

constexpr uint64_t kMarkTime = 5;  // the MARK (of thread 1) written after every case's records

using testing::Read;
using testing::ReadBytes;

// What `write` wrote, then a MARK at kMarkTime, read back.
Read WriteAndRead(const std::function<void(format::Writer&)>& write) {
  const char* tmp = getenv("TMPDIR");
  std::string path = std::string(tmp ? tmp : "/tmp") + "/hotline-bounds-" +
                     std::to_string(getpid()) + ".hotline";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  format::Writer w;
  EXPECT_TRUE(w.begin(fd, format::kFeatureSamples));
  write(w);
  w.add(format::MarkRecord{kMarkTime, 1, 0});
  EXPECT_TRUE(w.flush());
  close(fd);
  std::ifstream in(path, std::ios::binary);
  std::string bytes{std::istreambuf_iterator<char>(in), {}};
  unlink(path.c_str());
  return ReadBytes(bytes);
}

// A file of one chunk: `record` (its kind and body), then the same MARK as above. For values
// the writer's types cannot carry (enumerations wider than 32 bits).
Read HandMadeAndRead(format::RecordKind kind, const format::ByteBuffer& body) {
  format::ByteBuffer payload;
  payload.varint(0);  // the chunk's base time
  payload.varint(uint64_t(kind));
  payload.varint(body.size());
  payload.append(body.data(), body.size());
  format::ByteBuffer mark;
  mark.svarint(kMarkTime);
  mark.varint(1);
  mark.varint(0);
  payload.varint(uint64_t(format::RecordKind::kMark));
  payload.varint(mark.size());
  payload.append(mark.data(), mark.size());
  return ReadBytes(testing::HandMadeFile(payload));
}

TEST(FormatBounds, TheIssueFilesImpossibleWeightIsAMalformedRecordAndTheOtherSampleReads) {
  std::string bytes = testing::Issue26File();  // sample_profile.h says what it holds
  ASSERT_EQ(bytes.size(), 84u);
  Read r = ReadBytes(bytes);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.stats.records, 2u);
  EXPECT_EQ(r.stats.malformed_records, 1u);
  EXPECT_TRUE(r.stats.damaged());
  EXPECT_NE(r.stats.summary().find("1 malformed record(s) skipped"), std::string::npos)
      << r.stats.summary();
  ASSERT_EQ(r.stats.problems.size(), 1u);
  EXPECT_NE(r.stats.problems[0].find("malformed record of kind 9"), std::string::npos)
      << r.stats.problems[0];
  EXPECT_NE(r.stats.problems[0].find("weight 18446744073709551615"), std::string::npos)
      << r.stats.problems[0];
  ASSERT_EQ(r.profile.samples.size(), 1u);
  EXPECT_EQ(r.profile.samples[0].weight, 2u);
  EXPECT_EQ(r.profile.samples[0].flags, uint64_t(format::kSampleInRuntime));
}

// One bounded field: `write` writes the records of the case with `value` in the field (or,
// for a value the writer's types cannot carry, `body` makes the one record of kind `kind`),
// `bound` is the largest value read, `delivered` counts what the record under test delivered,
// and `what` is in the problem line of a value past the bound.
struct BoundCase {
  const char* name;
  uint64_t bound;
  const char* what;
  std::function<void(format::Writer&, uint64_t value)> write;
  std::function<size_t(const format::RawProfile&)> delivered;
  format::RecordKind kind = format::RecordKind::kMark;
  std::function<void(format::ByteBuffer&, uint64_t value)> body = nullptr;
};

Read ReadCase(const BoundCase& c, uint64_t value) {
  if (c.body) {
    format::ByteBuffer body;
    c.body(body, value);
    return HandMadeAndRead(c.kind, body);
  }
  return WriteAndRead([&](format::Writer& w) { c.write(w, value); });
}

// A PROCESS record's body with `field` (0 clock, 1 sampler, 2 unwinder, 3 trace) set to `value`.
void ProcessBody(format::ByteBuffer& b, int field, uint64_t value) {
  for (uint64_t v : {1, 0, 0}) b.varint(v);  // pid, ppid, realtime_ns
  b.svarint(1);                              // t
  b.varint(0);                               // exe
  b.varint(0);                               // argc
  b.varint(field == 0 ? value : 0);          // clock
  b.varint(field == 1 ? value : 0);          // sampler
  b.varint(1000);                            // period_ns
  b.varint(field == 2 ? value : 0);          // unwinder
  b.varint(0);                               // max_depth
  b.varint(0);                               // flags
  b.varint(field == 3 ? value : 0);          // trace
  b.varint(0);                               // trace_tick_ns_q32
}

format::ProcessRecord Process(uint64_t period_ns) {
  format::ProcessRecord r;
  r.pid = 1;
  r.time = 1;
  r.period_ns = period_ns;
  return r;
}

size_t SamplesOfThread(const format::RawProfile& p, uint64_t tid) {
  size_t n = 0;
  for (const format::SampleRecord& s : p.samples) n += s.tid == tid;
  return n;
}

std::vector<BoundCase> Cases() {
  using format::Writer;
  const uint64_t kTwo62 = uint64_t{1} << 62, kTwo60 = uint64_t{1} << 60;
  auto process = [](const format::RawProfile& p) -> size_t { return p.process.has_value(); };
  auto process_with = [](std::function<void(format::ProcessRecord&, uint64_t)> set) {
    return [set](Writer& w, uint64_t v) {
      format::ProcessRecord r = Process(1000);
      set(r, v);
      w.add(r);
    };
  };
  auto line_counts = [](uint64_t line, uint64_t executions) {
    return [line, executions](Writer& w, uint64_t v) {
      uint64_t pairs[2] = {line ? line : v, executions ? executions : v};
      w.add(format::LineCountsRecord{"a.c", "/bin/a", 1, pairs});
    };
  };
  auto function_count = [](int field) {
    return [field](Writer& w, uint64_t v) {
      format::FunctionCountRecord r{"a.c", "f", 1, 2, 3};
      (field == 0 ? r.start_line : field == 1 ? r.end_line : r.executions) = v;
      w.add(r);
    };
  };
  auto line_instructions = [](int field) {
    return [field](Writer& w, uint64_t v) {
      uint64_t row[4] = {7, 100, 3, 0};
      row[field] = v;
      w.add(format::LineInstructionsRecord{"a.c", "/bin/a", "f", 1, row});
    };
  };
  auto function_instructions = [](bool uncounted) {
    return [uncounted](Writer& w, uint64_t v) {
      format::FunctionInstructionsRecord r{"a.c", "f", "/bin/a", 100, 3, false};
      (uncounted ? r.uncounted : r.executed) = v;
      w.add(r);
    };
  };
  auto frame = [](bool def_line) {
    return [def_line](Writer& w, uint64_t v) {
      format::FrameRecord r;
      r.id = 1;
      r.name = "main";
      r.file = "a.pl";
      (def_line ? r.def_line : r.line) = v;
      w.add(r);
    };
  };
  auto call_counts = [](bool depth) {
    return [depth](Writer& w, uint64_t v) {
      uint64_t triples[3] = {0, 1, depth ? 1 : v};
      w.add(format::CallCountsRecord{10, 1, depth ? v : 1, 1, triples});
    };
  };
  auto alloc = [](int field) {
    return [field](Writer& w, uint64_t v) {
      format::AllocRecord r{10, 1, 0x1000, 16, 0};
      if (field == 0) r.size = v;
      if (field == 1) r.kind = static_cast<format::AllocKind>(0), r.sample_bytes = v;
      w.add(r);
    };
  };
  auto tex = [](bool cost) {
    return [cost](Writer& w, uint64_t v) {
      std::string_view names[1] = {"[phase]"};
      uint64_t rows[3] = {1, cost ? 1 : v, cost ? v : 1};
      w.add(format::TexCommandsRecord{10, 1, names, rows});
    };
  };
  auto watch_totals = [](bool reads) {
    return [reads](Writer& w, uint64_t v) {
      format::WatchTotal total{1, reads ? 1 : v, reads ? v : 0};
      w.add(format::WatchHitsRecord{10, 1, 0, nullptr, 1, &total});
    };
  };
  auto count = [](auto member) {
    return [member](const format::RawProfile& p) -> size_t { return (p.*member).size(); };
  };
  return {
      {"PROCESS realtime_ns", kTwo62, "realtime_ns",
       process_with([](format::ProcessRecord& r, uint64_t v) { r.realtime_ns = v; }), process},
      {"PROCESS clock", format::kMaxEnum, "clock", nullptr, process, format::RecordKind::kProcess,
       [](format::ByteBuffer& b, uint64_t v) { ProcessBody(b, 0, v); }},
      {"PROCESS sampler", format::kMaxEnum, "sampler", nullptr, process,
       format::RecordKind::kProcess, [](format::ByteBuffer& b, uint64_t v) { ProcessBody(b, 1, v); }},
      {"PROCESS unwinder", format::kMaxEnum, "unwinder", nullptr, process,
       format::RecordKind::kProcess, [](format::ByteBuffer& b, uint64_t v) { ProcessBody(b, 2, v); }},
      {"PROCESS trace", format::kMaxEnum, "trace", nullptr, process, format::RecordKind::kProcess,
       [](format::ByteBuffer& b, uint64_t v) { ProcessBody(b, 3, v); }},
      {"PROCESS period_ns", uint64_t{1} << 50, "period_ns",
       process_with([](format::ProcessRecord& r, uint64_t v) { r.period_ns = v; }), process},
      {"PROCESS max_depth", format::kMaxDepth, "max_depth",
       process_with([](format::ProcessRecord& r, uint64_t v) { r.max_depth = v; }), process},
      {"PROCESS trace_tick_ns_q32", uint64_t{1000} << 32, "trace_tick_ns_q32",
       process_with([](format::ProcessRecord& r, uint64_t v) { r.trace_tick_ns_q32 = v; }),
       process},
      {"MARK time", kTwo62, "time",
       [](Writer& w, uint64_t v) { w.add(format::MarkRecord{v, 2, 0}); },
       [](const format::RawProfile& p) -> size_t {
         return std::count_if(p.marks.begin(), p.marks.end(),
                              [](const format::RawMark& m) { return m.tid == 2; });
       }},
      // 1 µs a period: 2^50 ns is 2^50 / 1000 periods, rounded down.
      {"SAMPLE weight", (uint64_t{1} << 50) / 1000, "weight",
       [](Writer& w, uint64_t v) {
         w.add(Process(1000));
         w.add(format::SampleRecord{10, 2, 0, v, 0});
       },
       [](const format::RawProfile& p) { return SamplesOfThread(p, 2); }},
      // No PROCESS record: 1 ms a sample, as the model assumes.
      {"SAMPLE weight, period assumed", (uint64_t{1} << 50) / 1'000'000, "weight",
       [](Writer& w, uint64_t v) { w.add(format::SampleRecord{10, 2, 0, v, 0}); },
       [](const format::RawProfile& p) { return SamplesOfThread(p, 2); }},
      // A run of two: one weight past the bound drops both.
      {"SAMPLES weight", (uint64_t{1} << 50) / 1000, "weight",
       [](Writer& w, uint64_t v) {
         w.add(Process(1000));
         uint64_t pairs[4] = {0, 1, 0, v};
         w.add(format::SamplesRecord{10, 2, 0, 2, pairs});
       },
       [](const format::RawProfile& p) { return SamplesOfThread(p, 2); }},
      // 1024 samples of 2^50 − 1 ns leave 1024 ns of the run's 2^60.
      {"the run's samples", 1024, "the time of the run's samples",
       [](Writer& w, uint64_t v) {
         w.add(Process(1));
         for (int i = 0; i < 1024; ++i)
           w.add(format::SampleRecord{10, 1, 0, (uint64_t{1} << 50) - 1, 0});
         w.add(format::SampleRecord{10, 2, 0, v, 0});
       },
       [](const format::RawProfile& p) { return SamplesOfThread(p, 2); }},
      {"THREAD_END cpu_ns", kTwo60, "CPU time",
       [](Writer& w, uint64_t v) { w.add(format::ThreadEndRecord{10, 2, v}); },
       [](const format::RawProfile& p) -> size_t { return p.threads.size(); }},
      {"THREAD_END cpu_ns, the run's", 5, "CPU time",
       [](Writer& w, uint64_t v) {
         w.add(format::ThreadEndRecord{10, 1, kTwo60 - 5});
         w.add(format::ThreadEndRecord{10, 2, v});
       },
       [](const format::RawProfile& p) -> size_t { return p.threads.size() - 1; }},
      {"MODULE_LOAD start + size", (uint64_t{1} << 63) - 1, "size",
       [](Writer& w, uint64_t v) {
         format::ModuleLoadRecord r;
         r.time = 10;
         r.id = 1;
         r.start = uint64_t{1} << 63;
         r.size = v;
         w.add(r);
       },
       count(&format::RawProfile::modules)},
      {"STATE source", format::kMaxEnum, "source", nullptr, count(&format::RawProfile::states),
       format::RecordKind::kState,
       [](format::ByteBuffer& b, uint64_t v) {
         b.svarint(10);  // t
         for (uint64_t field : {uint64_t(1), uint64_t(1), v}) b.varint(field);  // tid, on, source
       }},
      {"END how", format::kMaxEnum, "how", nullptr,
       [](const format::RawProfile& p) -> size_t { return p.end.has_value(); },
       format::RecordKind::kEnd,
       [](format::ByteBuffer& b, uint64_t v) {
         b.svarint(10);  // t
         b.varint(v);    // how
         b.varint(0);    // code
       }},
      {"CALL_COUNTS max_depth", format::kMaxDepth, "max_depth", call_counts(true),
       count(&format::RawProfile::call_counts)},
      {"CALL_COUNTS calls", format::kMaxCount, "calls", call_counts(false),
       count(&format::RawProfile::call_counts)},
      {"CALL_SITE_COUNTS calls", format::kMaxCount, "calls",
       [](Writer& w, uint64_t v) {
         uint64_t quads[4] = {0x1234, 0x1105, 1, v};
         w.add(format::CallSiteCountsRecord{10, 1, 1, quads});
       },
       count(&format::RawProfile::call_site_counts)},
      {"TRACE_EVENTS events", 3, "events",
       [](Writer& w, uint64_t v) {
         const uint8_t packed[3] = {2, 5, 3};
         w.add(format::TraceEventsRecord{1, 0, v, packed, 3, false});
       },
       count(&format::RawProfile::trace_events)},
      {"TRACE_FUNCTION seen", format::kMaxTime, "seen",
       [](Writer& w, uint64_t v) { w.add(format::TraceFunctionRecord{1, 0x1100, v}); },
       count(&format::RawProfile::trace_functions)},
      {"ALLOC size", format::kMaxBlockBytes, "size", alloc(0), count(&format::RawProfile::allocs)},
      {"ALLOC sample_bytes", format::kMaxBlockBytes, "sample_bytes", alloc(1),
       count(&format::RawProfile::allocs)},
      {"ALLOC kind", format::kMaxEnum, "kind", nullptr, count(&format::RawProfile::allocs),
       format::RecordKind::kAlloc,
       [](format::ByteBuffer& b, uint64_t v) {
         b.svarint(10);  // t
         for (uint64_t field : {uint64_t(1), uint64_t(0x1000), uint64_t(16), uint64_t(0), v})
           b.varint(field);  // tid, address, size, node, kind
       }},
      // 32 blocks of 2^57 − 1 bytes leave 32 of the run's 2^62.
      {"the run's allocations", 32, "allocated bytes",
       [](Writer& w, uint64_t v) {
         for (int i = 0; i < 32; ++i)
           w.add(format::AllocRecord{10, 1, 0x1000, format::kMaxBlockBytes - 1, 0});
         w.add(format::AllocRecord{10, 2, 0x2000, v, 0});
       },
       [](const format::RawProfile& p) -> size_t { return p.allocs.size() - 32; }},
      {"FREE size", format::kMaxBlockBytes, "size",
       [](Writer& w, uint64_t v) {
         w.add(format::FreeRecord{10, 1, 0x1000, format::FreeKind::kMunmap, v});
       },
       count(&format::RawProfile::frees)},
      {"FREE kind", format::kMaxEnum, "kind", nullptr, count(&format::RawProfile::frees),
       format::RecordKind::kFree,
       [](format::ByteBuffer& b, uint64_t v) {
         b.svarint(10);  // t
         for (uint64_t field : {uint64_t(1), uint64_t(0x1000), v, uint64_t(0)})
           b.varint(field);  // tid, address, kind, size
       }},
      {"LINE_COUNTS line", format::kMaxLine, "line", line_counts(0, 1),
       count(&format::RawProfile::line_counts)},
      {"LINE_COUNTS executions", format::kMaxCount, "executions", line_counts(7, 0),
       count(&format::RawProfile::line_counts)},
      {"FUNCTION_COUNT start_line", format::kMaxLine, "start_line", function_count(0),
       count(&format::RawProfile::function_counts)},
      {"FUNCTION_COUNT end_line", format::kMaxLine, "end_line", function_count(1),
       count(&format::RawProfile::function_counts)},
      {"FUNCTION_COUNT executions", format::kMaxCount, "executions", function_count(2),
       count(&format::RawProfile::function_counts)},
      {"LINE_INSTRUCTIONS line", format::kMaxLine, "line", line_instructions(0),
       count(&format::RawProfile::line_instructions)},
      {"LINE_INSTRUCTIONS executed", format::kMaxCount, "executed", line_instructions(1),
       count(&format::RawProfile::line_instructions)},
      {"LINE_INSTRUCTIONS uncounted", format::kMaxCount, "uncounted", line_instructions(2),
       count(&format::RawProfile::line_instructions)},
      {"FUNCTION_INSTRUCTIONS executed", format::kMaxCount, "executed",
       function_instructions(false), count(&format::RawProfile::function_instructions)},
      {"FUNCTION_INSTRUCTIONS uncounted", format::kMaxCount, "uncounted",
       function_instructions(true), count(&format::RawProfile::function_instructions)},
      {"FRAME line", format::kMaxLine, "line", frame(false), count(&format::RawProfile::frames)},
      {"FRAME def_line", format::kMaxLine, "def_line", frame(true),
       count(&format::RawProfile::frames)},
      {"FRAMES line", format::kMaxLine, "line",
       [](Writer& w, uint64_t v) {
         std::string_view texts[2] = {"main", "a.pl"};
         format::FramesEntry entries[2] = {{1, 0, 1, 3, 1, 1, 1, 0}, {2, 0, 1, v, 1, 1, 1, 0}};
         w.add(format::FramesRecord{2, texts, 2, entries});
       },
       count(&format::RawProfile::frames)},
      {"WATCH_HITS writes", format::kMaxCount, "writes", watch_totals(false),
       count(&format::RawProfile::watch_hits)},
      {"WATCH_HITS reads", format::kMaxCount, "reads", watch_totals(true),
       count(&format::RawProfile::watch_hits)},
      {"TEX_COMMANDS slots", format::kMaxCount, "slots", tex(false),
       count(&format::RawProfile::tex_commands)},
      {"TEX_COMMANDS cost", format::kMaxCount, "cost", tex(true),
       count(&format::RawProfile::tex_commands)},
      // Two nodes from first_id: the last id is first_id + 1.
      {"STACK_NODES first_id", ~uint64_t{0} - 1, "first_id",
       [](Writer& w, uint64_t v) {
         uint64_t parents[2] = {0, 0}, addresses[2] = {0x10, 0x20};
         w.add(format::StackNodesRecord{v, 0, 2, parents, addresses});
       },
       count(&format::RawProfile::stack_nodes)},
  };
}

class FormatBoundsTest : public ::testing::TestWithParam<BoundCase> {};

TEST_P(FormatBoundsTest, AtTheBoundReadsAndPastItIsAMalformedRecord) {
  const BoundCase& c = GetParam();
  Read at = ReadCase(c, c.bound);
  ASSERT_TRUE(at.status.ok()) << at.status.message();
  EXPECT_EQ(at.stats.malformed_records, 0u) << (at.stats.problems.empty() ? ""
                                                                         : at.stats.problems[0]);
  EXPECT_GT(c.delivered(at.profile), 0u);

  Read past = ReadCase(c, c.bound + 1);
  ASSERT_TRUE(past.status.ok()) << past.status.message();
  EXPECT_EQ(past.stats.malformed_records, 1u);
  EXPECT_TRUE(past.stats.damaged());
  EXPECT_EQ(c.delivered(past.profile), 0u);
  ASSERT_EQ(past.stats.problems.size(), 1u);
  EXPECT_NE(past.stats.problems[0].find(c.what), std::string::npos) << past.stats.problems[0];
  // The rest of the file still reads: the MARK of thread 1 after it.
  ASSERT_FALSE(past.profile.marks.empty());
  EXPECT_EQ(past.profile.marks.back().tid, 1u);
}

INSTANTIATE_TEST_SUITE_P(EveryBoundedField, FormatBoundsTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<BoundCase>& info) {
                           std::string name;
                           for (const char* p = info.param.name; *p; ++p)
                             name += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
                           return name;
                         });

}  // namespace
}  // namespace hotline

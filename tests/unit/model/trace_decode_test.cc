// Timed trace streams in both codes (docs/format.md): TRACE_EVENTS and TRACE_EVENTS_SHORT holding
// the same calls at the same ticks give the same exact calls and times; the short code's
// repeated entries name the function their caller last entered, and a damaged record stops
// where the damage is. Counts mode's call-site counts find their callers through the inline
// chains of the two return addresses.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/varint.h"
#include "format/raw_profile.h"
#include "model/trace.h"

namespace hotline {
namespace {

// An event of the stream: entry of `function` (a trace id) or an exit, `ticks` after the last.
struct Event {
  bool exit;
  uint64_t function;
  uint64_t ticks;
};

void Put(std::string& out, uint64_t v) {
  uint8_t bytes[10];
  out.append(reinterpret_cast<const char*>(bytes), EncodeVarint(v, bytes));
}

std::string LongCode(const std::vector<Event>& events) {
  std::string out;
  for (const Event& e : events) {
    Put(out, e.function << 1 | (e.exit ? 1 : 0));
    Put(out, e.ticks);
  }
  return out;
}

// `repeat[i]`: event i is an entry written as the caller's last callee.
std::string ShortCode(const std::vector<Event>& events, const std::vector<bool>& repeat) {
  std::string out;
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    uint64_t kind = e.exit ? 0 : repeat[i] ? 1 : 2;
    if (kind < 2 && e.ticks <= format::kShortMaxTicks) {
      out.push_back(char(kind * format::kShortRepeatEntry + e.ticks));
      continue;
    }
    out.push_back(char(format::kShortLong + kind));
    Put(out, e.ticks);
    if (kind == 2) Put(out, e.function);
  }
  return out;
}

format::RawProfile Raw(const std::string& packed, uint64_t events, bool short_code) {
  format::RawProfile raw;
  raw.process.emplace();
  raw.process->trace = format::TraceMode::kTimed;
  raw.process->trace_tick_ns_q32 = uint64_t{1} << 32;  // 1 tick = 1 ns
  raw.trace_functions = {{1, 0x1000}, {2, 0x2000}, {3, 0x3000}};
  raw.trace_events.push_back(format::RawTraceEvents{7, 100, events, packed, short_code});
  return raw;
}

// Functions 0 (main), 1 (f), 2 (g) at 0x1000, 0x2000, 0x3000, 0x1000 bytes each; g's code is
// also inlined into f at 0x2800..0x28ff.
model::FunctionId At(uint64_t address, uint64_t) {
  return model::FunctionId(uint32_t(address / 0x1000 - 1));
}

std::vector<model::FunctionId> FramesBefore(uint64_t return_address, uint64_t) {
  uint64_t call = return_address - 1;
  if (call < 0x1000 || call >= 0x4000) return {};
  if (call >= 0x2800 && call < 0x2900) return {model::FunctionId(1u), model::FunctionId(2u)};
  return {At(call, 0)};
}

model::Profile Replay(const format::RawProfile& raw) {
  model::Profile p;
  p.functions.resize(3);
  model::ApplyTrace(raw, At, FramesBefore, p, std::nullopt, /*keep_calls=*/true);
  return p;
}

// main (1) calls f (2) three times; f calls g (3) twice, then once more after a long pause.
const std::vector<Event> kEvents = {
    {false, 1, 0}, {false, 2, 5},  {false, 3, 10}, {true, 0, 20}, {false, 3, 3},
    {true, 0, 40}, {true, 0, 2},   {false, 2, 63}, {true, 0, 64}, {false, 2, 1},
    {false, 3, 1}, {true, 0, 900}, {true, 0, 7},   {true, 0, 11},
};
const std::vector<bool> kRepeat = {false, false, false, false, true,  false, false,
                                   true,  false, true,  true,  false, false, false};

TEST(TraceDecode, ShortCodeGivesTheSameTimesAsTheLongCode) {
  std::string short_code = ShortCode(kEvents, kRepeat);
  EXPECT_LT(short_code.size(), LongCode(kEvents).size());
  model::Profile a = Replay(Raw(LongCode(kEvents), kEvents.size(), false));
  model::Profile b = Replay(Raw(short_code, kEvents.size(), true));
  ASSERT_TRUE(a.summary.trace_timed);
  ASSERT_TRUE(b.summary.trace_timed);
  EXPECT_EQ(a.summary.traced_total_ns, b.summary.traced_total_ns);
  EXPECT_EQ(b.summary.traced_total_ns, 1127u);  // every tick from main's entry to its exit
  for (size_t i = 0; i < 3; ++i) {
    const model::Function& fa = a.functions[i];
    const model::Function& fb = b.functions[i];
    EXPECT_EQ(fa.traced_inclusive_ns, fb.traced_inclusive_ns) << i;
    EXPECT_EQ(fa.traced_self_ns, fb.traced_self_ns) << i;
    EXPECT_EQ(fa.traced_min_ns, fb.traced_min_ns) << i;
    EXPECT_EQ(fa.traced_max_ns, fb.traced_max_ns) << i;
    EXPECT_EQ(fa.traced_call_sum_ns, fb.traced_call_sum_ns) << i;
  }
  // g's calls: 20, 40 and 900 ticks; f's: 5 + ... from its entries to its exits.
  EXPECT_EQ(b.functions[2].traced_min_ns, 20u);
  EXPECT_EQ(b.functions[2].traced_max_ns, 900u);
  EXPECT_EQ(b.functions[2].traced_call_sum_ns, 960u);
  EXPECT_EQ(b.functions[1].traced_call_sum_ns, (10 + 20 + 3 + 40 + 2) + 64 + (1 + 900 + 7));
  ASSERT_EQ(a.calls.size(), b.calls.size());
  for (size_t i = 0; i < a.calls.size(); ++i) {
    EXPECT_EQ(a.calls[i].function, b.calls[i].function) << i;
    EXPECT_EQ(a.calls[i].start_ns, b.calls[i].start_ns) << i;
    EXPECT_EQ(a.calls[i].end_ns, b.calls[i].end_ns) << i;
  }
}

TEST(TraceDecode, RepeatedEntryWithoutAnEarlierOneEndsTheRecord) {
  // main entered, then "the function main last entered": it entered none.
  std::string packed =
      ShortCode({{false, 1, 0}, {false, 2, 4}, {true, 0, 6}}, {false, true, false});
  model::Profile p = Replay(Raw(packed, 3, true));
  // Only main's entry is read; the stream's end closes it at that tick.
  EXPECT_EQ(p.functions[0].traced_call_sum_ns, 0u);
  EXPECT_EQ(p.functions[1].traced_call_sum_ns, 0u);
}

TEST(TraceDecode, UnknownFirstByteEndsTheRecord) {
  std::string packed = ShortCode({{false, 1, 0}, {false, 2, 4}}, {false, false});
  packed.push_back(char(0x84));  // not an event
  packed.push_back(char(0x05));
  model::Profile p = Replay(Raw(packed, 4, true));
  EXPECT_EQ(p.functions[0].traced_call_sum_ns, 4u);  // main, open to f's entry, the last read
  EXPECT_EQ(p.functions[1].traced_call_sum_ns, 0u);
}

uint64_t EdgeCalls(const model::Profile& p, uint32_t caller, uint32_t callee) {
  if (caller >= p.callees.size()) return 0;
  for (const model::CallEdge& e : p.callees[caller])
    if (e.child.index() == callee) return e.calls;
  return 0;
}

TEST(TraceDecode, CallsFromUntracedCodeHaveTheCallersAtTheirCallSites) {
  // main (1) calls f (2); in f, g (3) is entered from code of main's (a comparator that main's
  // code called back, say), from f's own code, from code nothing is known of, and once more as
  // the function f last entered.
  std::string packed = ShortCode({{false, 1, 0}, {false, 2, 1}}, {false, false});
  auto entry_from = [&](uint64_t site) {
    packed.push_back(char(format::kShortLong + 3));
    Put(packed, 1);
    Put(packed, 3);
    Put(packed, site);
    packed.push_back(char(0));  // its exit, at once
  };
  entry_from(0x1050);
  entry_from(0x2050);
  entry_from(0x9000);
  packed += ShortCode({{false, 3, 1}, {true, 0, 1}, {true, 0, 1}, {true, 0, 1}},
                      {true, false, false, false});
  model::Profile p = Replay(Raw(packed, 2 + 3 * 2 + 4, true));
  EXPECT_EQ(p.functions[2].calls, 4u);
  EXPECT_EQ(p.functions[2].traced_call_sum_ns, 1u);  // the last call's tick
  EXPECT_EQ(EdgeCalls(p, 0, 1), 1u);
  EXPECT_EQ(EdgeCalls(p, 0, 2), 1u);  // from main's code
  EXPECT_EQ(EdgeCalls(p, 1, 2), 2u);  // f's own call and the repeated one
  EXPECT_EQ(p.summary.max_call_depth, 3u);
}

TEST(TraceCallSites, CallersComeFromTheCallSiteOrTheInlinedCopy) {
  format::RawProfile raw;
  raw.process.emplace();
  raw.process->trace = format::TraceMode::kCounts;
  raw.trace_functions = {{1, 0x1000}, {2, 0x2000}, {3, 0x3000}};
  // (call site, entry hook return, callee, calls); a thread's records add up (each holds the
  // calls since its previous one: the runtime writes one before a module's unload), and a
  // second thread adds to them.
  raw.call_site_counts.push_back({10, 7, {{0x1010, 0x2004, 2, 1}}});
  raw.call_site_counts.push_back({20,
                                  7,
                                  {{0x1010, 0x2004, 2, 3},  // main calls f
                                   {0x2010, 0x3004, 3, 5},  // f calls g
                                   {0x1020, 0x2804, 3, 7},  // g inlined into f: f is the caller
                                   // g's copy in f whose hook GCC placed outside the copy's inline
                                   // range: the call site is f's caller's, the caller still f
                                   {0x1030, 0x2904, 3, 4},
                                   {0x9000, 0x3004, 3, 1}}});  // from code nothing is known of
  raw.call_site_counts.push_back({30, 8, {{0x2010, 0x3004, 3, 2}}});
  model::Profile p = Replay(raw);
  EXPECT_TRUE(p.summary.traced);
  EXPECT_EQ(p.summary.max_call_depth, 0u);  // counts mode keeps no stack
  EXPECT_EQ(p.functions[1].calls, 4u);
  EXPECT_TRUE(p.functions[1].calls_exact);
  EXPECT_EQ(p.functions[2].calls, 19u);
  EXPECT_EQ(EdgeCalls(p, 0, 1), 4u);
  EXPECT_EQ(EdgeCalls(p, 1, 2), 18u);
  EXPECT_EQ(EdgeCalls(p, 0, 2), 0u);
}

TEST(TraceCallSites, InlineCallersAreTracedFunctionsUnderTheirTracedRows) {
  // Rows: 0 main, 1 f, 2 g (traced); 3 h, an inlined helper without hooks; 4 f again, the row of
  // the program's DWARF for the f whose hooks pass libstdc++'s copy (row 1).
  format::RawProfile raw;
  raw.process.emplace();
  raw.process->trace = format::TraceMode::kCounts;
  raw.trace_functions = {{1, 0x1000}, {2, 0x2000}, {3, 0x3000}};
  // g's hook at 0x5004 runs in g inlined into h inlined into f's DWARF row, in main; at 0x5104
  // in g inlined into h inlined into main.
  raw.call_site_counts.push_back({10, 7, {{0x1010, 0x5004, 3, 2}, {0x1010, 0x5104, 3, 5}}});
  model::Profile p;
  p.functions.resize(5);
  p.functions[1].name = "f";
  p.functions[4].name = "f";
  p.functions[3].name = "h";
  auto chain = [](uint64_t return_address, uint64_t) {
    using model::FunctionId;
    if (return_address == 0x5004) return std::vector{FunctionId(0u), FunctionId(4u),
                                                      FunctionId(3u), FunctionId(2u)};
    if (return_address == 0x5104)
      return std::vector{FunctionId(0u), FunctionId(3u), FunctionId(2u)};
    return FramesBefore(return_address, 0);
  };
  model::ApplyTrace(raw, At, chain, p, std::nullopt, /*keep_calls=*/false);
  EXPECT_EQ(p.functions[2].calls, 7u);
  EXPECT_EQ(EdgeCalls(p, 1, 2), 2u);  // f's traced row, past h
  EXPECT_EQ(EdgeCalls(p, 0, 2), 5u);  // past h, to the function it is inlined into
  EXPECT_EQ(EdgeCalls(p, 3, 2), 0u);
  EXPECT_EQ(EdgeCalls(p, 4, 2), 0u);
}

}  // namespace
}  // namespace hotline

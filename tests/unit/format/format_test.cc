// The .hotline format: every record kind round-trips, and every way a file can be damaged is
// read as far as it can be, reported, and never crashes the reader (docs/format.md).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "base/crc32c.h"
#include "base/varint.h"
#include "format/byte_buffer.h"
#include "format/raw_profile.h"
#include "format/reader.h"
#include "format/schema.h"
#include "format/writer.h"
#include "read_bytes.h"
#include "sample_profile.h"

namespace hotline {
namespace {

using testing::HandMadeFile;

std::string TempPath(const std::string& name) {
  const char* tmp = getenv("TMPDIR");
  return std::string(tmp ? tmp : "/tmp") + "/hotline-format-" + std::to_string(getpid()) + "-" +
         name;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

using testing::Read;
using testing::ReadBytes;

// A file holding one hand-made record of `kind`, read.
Read ReadOneRecord(format::RecordKind kind, const format::ByteBuffer& body) {
  format::ByteBuffer payload;
  payload.varint(0);  // the chunk's base time
  payload.varint(uint64_t(kind));
  payload.varint(body.size());
  payload.append(body.data(), body.size());
  return ReadBytes(HandMadeFile(payload));
}

// A profile that `write` wrote with a begun writer, read back.
template <typename WriteFn>
Read WriteAndRead(const std::string& name, WriteFn write) {
  std::string path = TempPath(name);
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  format::Writer w;
  EXPECT_TRUE(w.begin(fd, 1));
  write(w);
  EXPECT_TRUE(w.flush());
  close(fd);
  Read r = ReadBytes(ReadAll(path));
  unlink(path.c_str());
  return r;
}

// The chunk boundaries of a well-formed file: offsets where each chunk header starts.
std::vector<size_t> ChunkOffsets(const std::string& bytes) {
  std::vector<size_t> offsets;
  size_t pos = format::kFileHeaderSize;
  while (pos + format::kChunkHeaderSize <= bytes.size()) {
    offsets.push_back(pos);
    uint32_t stored;
    std::memcpy(&stored, bytes.data() + pos + 8, 4);
    pos += format::kChunkHeaderSize + stored;
  }
  return offsets;
}

class FormatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = TempPath("sample.hotline");
    ASSERT_TRUE(testing::WriteSampleProfile(path_, 3));
    bytes_ = ReadAll(path_);
  }
  void TearDown() override { unlink(path_.c_str()); }
  std::string path_, bytes_;
};

TEST(Crc32c, KnownVectorsAndHardwareAgreesWithBitwise) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
  std::mt19937 rng(7);
  for (size_t length = 0; length <= 300; ++length) {
    std::string data(length, '\0');
    for (char& c : data) c = char(rng());
    uint32_t crc = ~0u;  // bitwise reference
    for (unsigned char byte : data) {
      crc ^= byte;
      for (int k = 0; k < 8; ++k) crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
    }
    EXPECT_EQ(Crc32c(data.data(), data.size()), ~crc) << "length " << length;
    // Extending in two pieces gives the same as one.
    uint32_t split =
        Crc32c(data.data() + length / 2, length - length / 2, Crc32c(data.data(), length / 2));
    EXPECT_EQ(split, ~crc);
  }
}

TEST(Varint, EdgeValuesAndOverlongInput) {
  for (uint64_t v : {0ull, 1ull, 127ull, 128ull, 16383ull, 16384ull, ~0ull}) {
    uint8_t buf[kMaxVarintBytes];
    size_t n = EncodeVarint(v, buf);
    ByteCursor in(buf, n);
    uint64_t back;
    ASSERT_TRUE(in.varint(&back));
    EXPECT_EQ(back, v);
    EXPECT_TRUE(in.atEnd());
  }
  for (int64_t v : std::initializer_list<int64_t>{0, -1, 1, INT64_MIN, INT64_MAX})
    EXPECT_EQ(UnZigZag(ZigZag(v)), v);
  uint8_t overlong[11];
  std::memset(overlong, 0x80, sizeof overlong);
  ByteCursor in(overlong, sizeof overlong);
  uint64_t v;
  EXPECT_FALSE(in.varint(&v));
  EXPECT_FALSE(in.ok());
  uint8_t cut[1] = {0x80};
  ByteCursor short_in(cut, 1);
  EXPECT_FALSE(short_in.varint(&v));
}

TEST_F(FormatTest, EveryRecordKindRoundTrips) {
  Read r = ReadBytes(bytes_);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_FALSE(r.stats.damaged());
  EXPECT_EQ(r.stats.version, format::kVersion);
  EXPECT_EQ(r.stats.chunks, 5u);  // three of samples, the tail, the appended counts
  const format::RawProfile& p = r.profile;
  ASSERT_TRUE(p.process.has_value());
  EXPECT_EQ(p.process->pid, 100u);
  EXPECT_EQ(p.process->exe, "/usr/bin/prog");
  EXPECT_EQ(p.process->argv, (std::vector<std::string>{"prog", "--fast"}));
  EXPECT_EQ(p.process->trace, format::TraceMode::kCounts);
  ASSERT_EQ(p.modules.size(), 1u);
  EXPECT_EQ(p.modules[0].build_id, std::string("\xde\xad\xbe\xef", 4));
  EXPECT_EQ(p.samples.size(), 120u);
  // Three distinct stacks sharing one caller: 1 + 3 nodes, ids from 1.
  EXPECT_EQ(p.stack_nodes.size(), 4u);
  EXPECT_EQ(p.stack_nodes.count(1), 1u);
  std::vector<uint64_t> frames = p.stack(p.samples[1].node);
  EXPECT_EQ(frames, (std::vector<uint64_t>{0x1210, 0x1100}));
  // Times survive the per-chunk delta encoding.
  for (size_t i = 0; i < p.samples.size(); ++i)
    EXPECT_EQ(p.samples[i].time, 3'000'000 + i * 1'000'000);
  EXPECT_EQ(p.marks.size(), 3u);
  EXPECT_EQ(p.marks[0].label, "phase");
  EXPECT_EQ(p.allocs.size(), 3u);
  EXPECT_EQ(p.frees.size(), 3u);
  EXPECT_EQ(p.allocs[2].address, 0x5000u + 128);
  ASSERT_EQ(p.call_counts.size(), 1u);
  EXPECT_EQ(p.call_counts[0].edges[0].calls, 7u);
  ASSERT_EQ(p.call_site_counts.size(), 1u);
  ASSERT_EQ(p.call_site_counts[0].sites.size(), 2u);
  EXPECT_EQ(p.call_site_counts[0].tid, 100u);
  EXPECT_EQ(p.call_site_counts[0].sites[0].call_site, 0x1234u);
  EXPECT_EQ(p.call_site_counts[0].sites[0].hook_return, 0x1105u);
  EXPECT_EQ(p.call_site_counts[0].sites[1].callee, 1u);
  EXPECT_EQ(p.call_site_counts[0].sites[1].calls, 2u);
  EXPECT_EQ(p.trace_functions.at(1), 0x1100u);
  ASSERT_EQ(p.trace_events.size(), 1u);
  EXPECT_EQ(p.trace_events[0].packed, std::string("\x02\x05\x03\x09", 4));
  ASSERT_EQ(p.sizes.size(), 2u);
  EXPECT_EQ(p.sizes[0].tid, 100u);
  EXPECT_EQ(p.sizes[0].function, 1u);
  EXPECT_EQ(p.sizes[0].entry_tick, 1005u);
  EXPECT_EQ(p.sizes[0].n, 42u);
  EXPECT_EQ(p.sizes[1].function, 0u);
  EXPECT_EQ(p.sizes[1].n, 7u);
  ASSERT_EQ(p.threads.size(), 1u);
  EXPECT_EQ(*p.threads[0].cpu_ns, 123'456'789u);
  EXPECT_EQ(p.disabled_reasons, std::vector<std::string>{"a test reason"});
  ASSERT_TRUE(p.end.has_value());
  ASSERT_EQ(p.line_counts.size(), 1u);
  EXPECT_EQ(p.line_counts[0].lines, (std::vector<std::pair<uint64_t, uint64_t>>{{10, 5}, {12, 0}}));
  ASSERT_EQ(p.function_counts.size(), 1u);
  EXPECT_EQ(p.function_counts[0].name, "main");
  ASSERT_EQ(p.line_instructions.size(), 1u);
  EXPECT_EQ(p.line_instructions[0].function, "main");
  ASSERT_EQ(p.line_instructions[0].lines.size(), 2u);
  EXPECT_EQ(p.line_instructions[0].lines[1].line, 12u);
  EXPECT_EQ(p.line_instructions[0].lines[1].executed, 3u);
  EXPECT_EQ(p.line_instructions[0].lines[1].uncounted, 4u);
  EXPECT_TRUE(p.line_instructions[0].lines[1].unbounded);
  EXPECT_FALSE(p.line_instructions[0].lines[0].unbounded);
  ASSERT_EQ(p.function_instructions.size(), 1u);
  EXPECT_EQ(p.function_instructions[0].executed, 28u);
  EXPECT_EQ(p.function_instructions[0].uncounted, 4u);
  EXPECT_TRUE(p.function_instructions[0].unbounded);
  EXPECT_EQ(p.dangling_references, 0u);
}

TEST_F(FormatTest, TruncationAtEveryOffsetNeverCrashesOrInventsRecords) {
  Read whole = ReadBytes(bytes_);
  for (size_t cut = 0; cut < bytes_.size(); ++cut) {
    Read r = ReadBytes(bytes_.substr(0, cut));
    if (cut < format::kFileHeaderSize) {
      EXPECT_FALSE(r.status.ok()) << "cut at " << cut;
      continue;
    }
    ASSERT_TRUE(r.status.ok()) << "cut at " << cut << ": " << r.status.message();
    EXPECT_LE(r.profile.samples.size(), whole.profile.samples.size());
    EXPECT_EQ(r.stats.damaged_chunks, 0u) << "cut at " << cut;
    bool at_boundary = cut == format::kFileHeaderSize;
    for (size_t offset : ChunkOffsets(bytes_)) at_boundary |= offset == cut;
    if (!at_boundary) {
      EXPECT_GT(r.stats.truncated_bytes, 0u) << "cut at " << cut;
    }
    // What was read is a prefix of the whole: the same samples in the same order.
    for (size_t i = 0; i < r.profile.samples.size(); ++i)
      EXPECT_EQ(r.profile.samples[i].time, whole.profile.samples[i].time);
  }
}

TEST_F(FormatTest, AFlippedByteLosesOnlyItsChunk) {
  std::vector<size_t> chunks = ChunkOffsets(bytes_);
  ASSERT_GE(chunks.size(), 3u);
  size_t begin = chunks[1], end = chunks[2];  // the second chunk, header and payload
  Read whole = ReadBytes(bytes_);
  for (size_t at = begin; at < end; ++at) {
    std::string damaged = bytes_;
    damaged[at] ^= 0x40;
    Read r = ReadBytes(damaged);
    ASSERT_TRUE(r.status.ok()) << at;
    EXPECT_EQ(r.stats.damaged_chunks, 1u) << "flip at " << at;
    EXPECT_GT(r.stats.bytes_skipped, 0u);
    EXPECT_EQ(r.stats.chunks, whole.stats.chunks - 1) << "flip at " << at;
    EXPECT_EQ(r.profile.samples.size(), whole.profile.samples.size() - 40) << "flip at " << at;
    EXPECT_TRUE(r.profile.end.has_value()) << "the chunks after it are read";
  }
}

TEST_F(FormatTest, WrongMagicAndDamagedHeaderAreRefused) {
  std::string wrong = bytes_;
  wrong[1] = 'X';
  Read r = ReadBytes(wrong);
  EXPECT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("not a hotline profile"), std::string::npos);
  std::string damaged = bytes_;
  damaged[20] ^= 1;  // inside the feature bits: the header CRC fails
  r = ReadBytes(damaged);
  EXPECT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("damaged profile header"), std::string::npos);
  EXPECT_FALSE(ReadBytes("").status.ok());
}

// Sets the header's version fields and fixes its CRC.
std::string WithVersions(std::string bytes, uint16_t version, uint16_t min_reader) {
  std::memcpy(&bytes[8], &version, 2);
  std::memcpy(&bytes[10], &min_reader, 2);
  uint32_t crc = Crc32c(bytes.data(), 28);
  std::memcpy(&bytes[28], &crc, 4);
  return bytes;
}

TEST_F(FormatTest, ANewerFileIsRefusedNamingBothVersions) {
  Read r = ReadBytes(WithVersions(bytes_, format::kVersion + 1, format::kVersion + 1));
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("version " + std::to_string(format::kVersion + 1)),
            std::string::npos)
      << r.status.message();
  EXPECT_NE(r.status.message().find("reads version " + std::to_string(format::kVersion)),
            std::string::npos)
      << r.status.message();
}

TEST(FormatNewer, UnknownRecordKindsOfAReadableNewerFileAreSkipped) {
  std::string path = TempPath("newer.hotline");
  {
    // A chunk holding a record of kind 999 between two known ones, written by hand.
    format::ByteBuffer payload;
    payload.varint(0);  // base time
    payload.varint(uint64_t(format::RecordKind::kString));
    payload.varint(4);
    payload.varint(1);
    payload.varint(2);
    payload.append("hi", 2);
    payload.varint(999);
    payload.varint(3);
    payload.append("\x01\x02\x03", 3);
    payload.varint(uint64_t(format::RecordKind::kMark));
    payload.varint(3);
    payload.varint(0);
    payload.varint(7);
    payload.varint(1);
    std::ofstream(path, std::ios::binary)
        << HandMadeFile(payload, format::kVersion + 1, format::kVersion);
  }
  format::ReadStats stats;
  Expected<format::RawProfile> p = format::LoadRawProfile(path, &stats);
  unlink(path.c_str());
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(stats.unknown_records, 1u);
  ASSERT_EQ(p->marks.size(), 1u);
  EXPECT_EQ(p->marks[0].label, "hi");
}

// Rewrites chunk `index`'s lengths and fixes its header CRC, so only the lengths are wrong.
std::string WithChunkLengths(std::string bytes, size_t offset, uint32_t stored, uint32_t raw) {
  std::memcpy(&bytes[offset + 8], &stored, 4);
  std::memcpy(&bytes[offset + 12], &raw, 4);
  uint32_t crc = Crc32c(bytes.data() + offset, 20);
  std::memcpy(&bytes[offset + 20], &crc, 4);
  return bytes;
}

TEST_F(FormatTest, ZeroAndAbsurdChunkLengthsAreDamage) {
  size_t second = ChunkOffsets(bytes_)[1];
  Read whole = ReadBytes(bytes_);
  for (auto [stored, raw] : {std::pair<uint32_t, uint32_t>{0, 0},
                             {0xFFFFFFFFu, 10},
                             {10, format::kMaxChunkBytes + 1},
                             {format::kMaxChunkBytes + 1, 10}}) {
    Read r = ReadBytes(WithChunkLengths(bytes_, second, stored, raw));
    ASSERT_TRUE(r.status.ok());
    EXPECT_TRUE(r.stats.damaged()) << stored << " " << raw;
    EXPECT_LT(r.profile.samples.size(), whole.profile.samples.size());
    EXPECT_TRUE(r.profile.end.has_value()) << "the reader finds the chunks after it";
  }
}

TEST(FormatDamage, ARecordRunningPastItsChunkIsReported) {
  format::ByteBuffer payload;
  payload.varint(0);
  payload.varint(uint64_t(format::RecordKind::kMark));
  payload.varint(200);  // longer than what follows
  payload.varint(1);
  std::string bytes = HandMadeFile(payload);
  Read r = ReadBytes(bytes);
  ASSERT_TRUE(r.status.ok());
  EXPECT_TRUE(r.stats.damaged());
  EXPECT_FALSE(r.stats.problems.empty());
}

TEST(FormatDamage, DanglingIdsAreCountedAndStacksMarkedBroken) {
  std::string path = TempPath("dangling.hotline");
  {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    format::Writer w;
    ASSERT_TRUE(w.begin(fd, 1));
    w.add(format::MarkRecord{1, 1, 42});          // string 42 never defined
    w.add(format::SampleRecord{2, 1, 77, 1, 0});  // stack node 77 never defined
    ASSERT_TRUE(w.flush());
    close(fd);
  }
  format::ReadStats stats;
  Expected<format::RawProfile> p = format::LoadRawProfile(path, &stats);
  unlink(path.c_str());
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->dangling_references, 1u);
  EXPECT_EQ(p->marks[0].label, "[unknown]");
  bool broken = false;
  EXPECT_TRUE(p->stack(p->samples[0].node, &broken).empty());
  EXPECT_TRUE(broken);
}

TEST(FormatWriter, AStackSeenBeforeCostsNoNewNodes) {
  std::string path = TempPath("interning.hotline");
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  format::Writer w;
  ASSERT_TRUE(w.begin(fd, 1));
  uint64_t outer = w.internStackNode(0, 0x100);
  uint64_t inner = w.internStackNode(outer, 0x200);
  EXPECT_EQ(outer, 1u);
  EXPECT_EQ(inner, 2u);
  ASSERT_TRUE(w.flush());
  // The same stack again: the same ids, and no new record in the file.
  EXPECT_EQ(w.internStackNode(0, 0x100), outer);
  EXPECT_EQ(w.internStackNode(outer, 0x200), inner);
  EXPECT_EQ(w.pendingBytes(), 0u);
  // A new stack sharing the caller costs only its new frame.
  EXPECT_EQ(w.internStackNode(outer, 0x300), 3u);
  ASSERT_TRUE(w.flush());
  close(fd);
  format::ReadStats stats;
  Expected<format::RawProfile> p = format::LoadRawProfile(path, &stats);
  unlink(path.c_str());
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->stack_nodes.size(), 3u);
}

// STACK_NODES and SAMPLES (what the TeX front-end writes) read as the STACK_NODEs and SAMPLEs
// they stand for, their ids continuing the writer's own; a batch with a parent below id 0 is
// malformed and delivers nothing.
TEST(FormatWriter, NodeAndSampleRunsReadAsSingleRecords) {
  Read read = WriteAndRead("runs.hotline", [](format::Writer& w) {
    uint64_t root = w.internStackNode(0, format::kNamedFrameTag | 1);
    ASSERT_EQ(w.nextStackNodeId(), 2u);
    // 2 under the root, 3 under 2, 4 under the root again.
    uint64_t parents[3] = {root, 2, root}, frames[3] = {2, 3, 4};
    w.add(format::StackNodesRecord{2, format::kNamedFrameTag, 3, parents, frames});
    EXPECT_EQ(w.internStackNode(4, format::kNamedFrameTag | 5), 5u);
    uint64_t pairs[6] = {3, 700, 1, 20, 5, 9};
    w.add(format::SamplesRecord{5000, 42, 0, 3, pairs});
  });
  ASSERT_TRUE(read.status.ok()) << read.status.message();
  EXPECT_EQ(read.stats.malformed_records, 0u);
  const format::RawProfile* p = &read.profile;
  ASSERT_EQ(p->stack_nodes.size(), 5u);
  EXPECT_EQ(p->stack(3),
            (std::vector<uint64_t>{format::kNamedFrameTag | 3, format::kNamedFrameTag | 2,
                                   format::kNamedFrameTag | 1}));
  EXPECT_EQ(p->stack(5),
            (std::vector<uint64_t>{format::kNamedFrameTag | 5, format::kNamedFrameTag | 4,
                                   format::kNamedFrameTag | 1}));
  ASSERT_EQ(p->samples.size(), 3u);
  EXPECT_EQ(p->samples[0].node, 3u);
  EXPECT_EQ(p->samples[0].weight, 700u);
  EXPECT_EQ(p->samples[1].node, 1u);
  EXPECT_EQ(p->samples[2].node, 5u);
  EXPECT_EQ(p->samples[2].weight, 9u);
  for (const auto& s : p->samples) {
    EXPECT_EQ(s.time, 5000u);
    EXPECT_EQ(s.tid, 42u);
  }

  // By hand: node 1's parent 2 below it.
  format::ByteBuffer body;
  for (uint64_t v : {1, 0, 2, 2, 7, 1, 8}) body.varint(v);  // first 1, tag 0, 2 nodes
  Read bad = ReadOneRecord(format::RecordKind::kStackNodes, body);
  EXPECT_EQ(bad.stats.malformed_records, 1u);
  EXPECT_TRUE(bad.profile.stack_nodes.empty());
}

// FRAMES (what the TeX front-end writes) read as the FRAMEs it stands for, each text from the
// record's own table; an index past the table is malformed and delivers none of its frames.
TEST(FormatWriter, FrameRunsReadAsSingleFrames) {
  Read read = WriteAndRead("frames.hotline", [](format::Writer& w) {
    std::string_view texts[] = {"\\foo", "a.tex", "tex", "", "b.tex"};
    format::FramesEntry frames[] = {{7, 0, 1, 12, 1, 4, 2, 0}, {3, 3, 4, 0, 3, 0, 2, 1}};
    w.add(format::FramesRecord{5, texts, 2, frames});
  });
  ASSERT_TRUE(read.status.ok()) << read.status.message();
  EXPECT_EQ(read.stats.malformed_records, 0u);
  const format::RawProfile* p = &read.profile;
  ASSERT_EQ(p->frames.size(), 2u);
  const format::RawFrame& foo = p->frames.at(7);
  EXPECT_EQ(foo.name, "\\foo");
  EXPECT_EQ(foo.file, "a.tex");
  EXPECT_EQ(foo.line, 12u);
  EXPECT_EQ(foo.def_file, "a.tex");
  EXPECT_EQ(foo.def_line, 4u);
  EXPECT_EQ(foo.module, "tex");
  EXPECT_EQ(foo.flags, 0u);
  const format::RawFrame& other = p->frames.at(3);  // an id below the previous one
  EXPECT_EQ(other.name, "");
  EXPECT_EQ(other.file, "b.tex");
  EXPECT_EQ(other.def_file, "");
  EXPECT_EQ(other.module, "tex");
  EXPECT_EQ(other.flags, 1u);

  // By hand: one text, a good frame, then a frame whose file is text 1 of 1.
  format::ByteBuffer body;
  body.varint(1);
  body.varint(1);
  body.append("x", 1);
  body.varint(2);
  for (uint64_t v : {2, 0, 0, 1, 0, 0, 0, 0}) body.varint(v);
  for (uint64_t v : {2, 0, 1, 1, 0, 0, 0, 0}) body.varint(v);
  Read bad = ReadOneRecord(format::RecordKind::kFrames, body);
  EXPECT_EQ(bad.stats.malformed_records, 1u);
  EXPECT_TRUE(bad.profile.frames.empty());
}

// TRACE_FUNCTION's optional time: absent for a front-end's frames, read back where the runtime
// wrote it.
TEST(FormatWriter, ATraceFunctionsSeenTimeRoundTrips) {
  Read r = WriteAndRead("seen.hotline", [](format::Writer& w) {
    w.add(format::TraceFunctionRecord{1, 0x1100});
    w.add(format::TraceFunctionRecord{2, 0x1100, 987654321});
  });
  EXPECT_EQ(r.stats.malformed_records, 0u);
  EXPECT_EQ(r.profile.trace_functions.at(1), 0x1100u);
  EXPECT_EQ(r.profile.trace_functions.at(2), 0x1100u);
  EXPECT_FALSE(r.profile.trace_function_seen.contains(1));
  EXPECT_EQ(r.profile.trace_function_seen.at(2), 987654321u);
}

// ALLOC's optional sample_bytes: absent (0) for the exact mode, read back where the sampled mode
// wrote it.
TEST(FormatWriter, AnAllocationsSampleBytesRoundTrip) {
  std::string path = TempPath("sampled.hotline");
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  format::Writer w;
  ASSERT_TRUE(w.begin(fd, 4));
  w.add(format::AllocRecord{1000, 7, 0x5000, 48, 0, format::AllocKind::kMalloc});
  w.add(format::AllocRecord{2000, 7, 0x6000, 100, 0, format::AllocKind::kNew, 524288});
  w.add(format::FreeRecord{3000, 7, 0x6000, format::FreeKind::kDelete, 0});
  ASSERT_TRUE(w.flush());
  close(fd);
  format::ReadStats stats;
  Expected<format::RawProfile> p = format::LoadRawProfile(path, &stats);
  unlink(path.c_str());
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->allocs.size(), 2u);
  EXPECT_EQ(p->allocs[0].sample_bytes, 0u);
  EXPECT_EQ(p->allocs[0].size, 48u);
  EXPECT_EQ(p->allocs[1].sample_bytes, 524288u);
  EXPECT_EQ(p->allocs[1].size, 100u);
  EXPECT_EQ(p->allocs[1].kind, format::AllocKind::kNew);
  ASSERT_EQ(p->frees.size(), 1u);
  EXPECT_EQ(p->frees[0].time, 3000u);
}

TEST(FormatWriter, TexCommandsRoundTripAndTheLastOneCounts) {
  std::string path = TempPath("tex-commands.hotline");
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  format::Writer w;
  ASSERT_TRUE(w.begin(fd, 1));
  std::string_view first_names[] = {"advance"};
  uint64_t first_rows[] = {90, 5, 700};
  w.add(format::TexCommandsRecord{10, 1, first_names, first_rows});
  ASSERT_TRUE(w.flush());
  // Running totals: a later record replaces the earlier one.
  std::string_view names[] = {"advance", "letter", "[phase]"};
  uint64_t rows[] = {90, 7, 1000, 11, 300, 123456789, 103, 2, 50};
  w.add(format::TexCommandsRecord{20, 3, names, rows});
  ASSERT_TRUE(w.flush());
  close(fd);
  format::ReadStats stats;
  Expected<format::RawProfile> p = format::LoadRawProfile(path, &stats);
  unlink(path.c_str());
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->tex_commands.size(), 3u);
  EXPECT_EQ(p->tex_commands[0].name, "advance");
  EXPECT_EQ(p->tex_commands[0].code, 90u);
  EXPECT_EQ(p->tex_commands[0].slots, 7u);
  EXPECT_EQ(p->tex_commands[0].cost, 1000u);
  EXPECT_EQ(p->tex_commands[1].name, "letter");
  EXPECT_EQ(p->tex_commands[1].slots, 300u);
  EXPECT_EQ(p->tex_commands[1].cost, 123456789u);
  EXPECT_EQ(p->tex_commands[2].name, "[phase]");
  EXPECT_EQ(p->tex_commands[2].code, 103u);
}

TEST(FormatNewer, AProcessRecordWithoutItsTrailingFieldsStillReads) {
  // The PROCESS body as the first version-1 writers made it: no trace fields at the end.
  format::ByteBuffer body;
  for (uint64_t v : {uint64_t(42), uint64_t(1), uint64_t(7)})
    body.varint(v);  // pid, ppid, realtime
  body.svarint(5);   // t
  body.varint(0);    // exe
  body.varint(0);    // argc
  for (uint64_t v :
       {uint64_t(0), uint64_t(1), uint64_t(1000000), uint64_t(1), uint64_t(64), uint64_t(0)})
    body.varint(v);  // clock, sampler, period, unwinder, max_depth, flags
  format::ByteBuffer payload;
  payload.varint(0);
  payload.varint(uint64_t(format::RecordKind::kProcess));
  payload.varint(body.size());
  payload.append(body.data(), body.size());
  Read r = ReadBytes(HandMadeFile(payload));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.stats.malformed_records, 0u);
  ASSERT_TRUE(r.profile.process.has_value());
  EXPECT_EQ(r.profile.process->pid, 42u);
  EXPECT_EQ(r.profile.process->period_ns, 1000000u);
  EXPECT_EQ(r.profile.process->trace, format::TraceMode::kNone);
}

// ALLOC and FREE, decoded on a path of their own: fields of several bytes read back whole; a
// record cut short, or with a varint longer than ten bytes, is malformed, and the time delta it
// began with still counts for the records after it, as for every other kind.
TEST(FormatHeap, HeapRecordsCutShortAreMalformedAndTheirTimeStillCounts) {
  format::ByteBuffer payload;
  payload.varint(0);  // the chunk's base time
  auto record = [&](format::RecordKind kind, const format::ByteBuffer& body) {
    payload.varint(uint64_t(kind));
    payload.varint(body.size());
    payload.append(body.data(), body.size());
  };
  format::ByteBuffer whole;  // t, tid, address, size, node, kind
  whole.svarint(1000);
  for (uint64_t v : {uint64_t(7), uint64_t(0x7f0000001230), uint64_t(1) << 20, uint64_t(300),
                     uint64_t(format::AllocKind::kCalloc)})
    whole.varint(v);
  record(format::RecordKind::kAlloc, whole);
  format::ByteBuffer cut;  // t and tid only
  cut.svarint(500);
  cut.varint(7);
  record(format::RecordKind::kAlloc, cut);
  format::ByteBuffer release;  // t, tid, address, kind, size
  release.svarint(250);
  for (uint64_t v :
       {uint64_t(8), uint64_t(0x7f0000001230), uint64_t(format::FreeKind::kFree), uint64_t(0)})
    release.varint(v);
  record(format::RecordKind::kFree, release);
  format::ByteBuffer sampled;  // the first one's fields, and sample_bytes
  sampled.append(whole.data(), whole.size());
  sampled.varint(524288);
  record(format::RecordKind::kAlloc, sampled);
  format::ByteBuffer overlong;  // t, then a tid of eleven bytes
  overlong.svarint(1);
  uint8_t eleven[11] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
  overlong.append(eleven, sizeof eleven);
  record(format::RecordKind::kFree, overlong);

  Read r = ReadBytes(HandMadeFile(payload));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.stats.malformed_records, 2u);
  ASSERT_EQ(r.profile.allocs.size(), 2u);
  const format::AllocRecord& a = r.profile.allocs[0];
  EXPECT_EQ(a.time, 1000u);
  EXPECT_EQ(a.tid, 7u);
  EXPECT_EQ(a.address, 0x7f0000001230u);
  EXPECT_EQ(a.size, uint64_t(1) << 20);
  EXPECT_EQ(a.node, 300u);
  EXPECT_EQ(a.kind, format::AllocKind::kCalloc);
  EXPECT_EQ(a.sample_bytes, 0u);
  ASSERT_EQ(r.profile.frees.size(), 1u);
  EXPECT_EQ(r.profile.frees[0].time, 1750u);  // the cut record's 500 counted
  EXPECT_EQ(r.profile.frees[0].tid, 8u);
  EXPECT_EQ(r.profile.frees[0].address, 0x7f0000001230u);
  EXPECT_EQ(r.profile.allocs[1].time, 2750u);
  EXPECT_EQ(r.profile.allocs[1].sample_bytes, 524288u);
}

TEST(FormatWriter, LargeChunksAreSplitAutomatically) {
  std::string path = TempPath("large.hotline");
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  format::Writer w;
  ASSERT_TRUE(w.begin(fd, 1));
  std::string text(1000, 'x');
  for (int i = 0; i < 20000; ++i) {
    text[0] = char('a' + i % 26);
    text[1] = char('a' + (i / 26) % 26);
    text[2] = char('a' + (i / 676) % 26);
    w.internString(text.data(), text.size());
  }
  ASSERT_TRUE(w.flush());
  close(fd);
  format::ReadStats stats;
  Expected<format::RawProfile> p = format::LoadRawProfile(path, &stats);
  unlink(path.c_str());
  ASSERT_TRUE(p.ok());
  EXPECT_GE(stats.chunks, 2u);           // 20 MB of records do not fit one 8 MiB chunk
  EXPECT_EQ(p->strings.size(), 17576u);  // 26^3 distinct texts
}

}  // namespace
}  // namespace hotline

namespace hotline {
namespace {

// WATCH and WATCH_HITS: every field back as written, negative enumerators and time deltas
// that go backwards included; a WATCH of an impossible size is malformed, not believed.
TEST(FormatWatch, WatchRecordsRoundTrip) {
  std::string path = TempPath("watch.hotline");
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  format::Writer writer;
  ASSERT_TRUE(writer.begin(fd, 0));
  format::WatchEnumerator enumerators[] = {{-1, "NONE"}, {5, "GREEN"}};
  format::WatchRecord watch;
  watch.time = 1000;
  watch.id = 7;
  watch.name = "file.c:paint";
  watch.address = 0x55550000abc0;
  watch.size = 4;
  watch.type = format::WatchType::kEnum;
  watch.flags = format::kWatchReads;
  watch.enumerator_count = 2;
  watch.enumerators = enumerators;
  writer.add(watch);
  format::WatchHit hits[] = {{7, 2000, 5, 0x401234}, {7, 1900, 0xffffffff, 0x401240}};
  format::WatchTotal totals[] = {{7, 2, 3}};
  writer.add(format::WatchHitsRecord{2000, 42, 2, hits, 1, totals});
  watch.size = 3;  // no watchpoint has 3 bytes
  writer.add(watch);
  ASSERT_TRUE(writer.flush());
  close(fd);
  Read r = ReadBytes(ReadAll(path));
  unlink(path.c_str());
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.stats.malformed_records, 1u);
  ASSERT_EQ(r.profile.watches.size(), 1u);
  const format::RawWatch& w = r.profile.watches[0];
  EXPECT_EQ(w.id, 7u);
  EXPECT_EQ(w.name, "file.c:paint");
  EXPECT_EQ(w.address, 0x55550000abc0u);
  EXPECT_EQ(w.size, 4u);
  EXPECT_EQ(w.type, format::WatchType::kEnum);
  EXPECT_EQ(w.flags, uint64_t(format::kWatchReads));
  EXPECT_EQ(w.enumerators,
            (std::vector<std::pair<int64_t, std::string>>{{-1, "NONE"}, {5, "GREEN"}}));
  ASSERT_EQ(r.profile.watch_hits.size(), 1u);
  const format::RawWatchHits& h = r.profile.watch_hits[0];
  EXPECT_EQ(h.tid, 42u);
  ASSERT_EQ(h.hits.size(), 2u);
  EXPECT_EQ(h.hits[1].time, 1900u);
  EXPECT_EQ(h.hits[1].value, 0xffffffffu);
  EXPECT_EQ(h.hits[1].ip, 0x401240u);
  ASSERT_EQ(h.totals.size(), 1u);
  EXPECT_EQ(h.totals[0].writes, 2u);
  EXPECT_EQ(h.totals[0].reads, 3u);
}

}  // namespace
}  // namespace hotline

#include "sample_profile.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "base/crc32c.h"
#include "format/writer.h"

namespace hotline::testing {

std::string HandMadeFile(const format::ByteBuffer& payload, uint16_t version, uint16_t min_reader) {
  format::ByteBuffer file;
  file.append(format::kMagic, 8);
  file.u16(version);
  file.u16(min_reader);
  file.u32(format::kFileHeaderSize);
  file.u64(1);
  file.u32(0);
  file.u32(Crc32c(file.data(), file.size()));
  format::ByteBuffer header;
  header.append(format::kChunkSync, 4);
  header.u16(1);
  header.u16(0);
  header.u32(uint32_t(payload.size()));
  header.u32(uint32_t(payload.size()));
  header.u32(Crc32c(payload.data(), payload.size()));
  header.u32(Crc32c(header.data(), header.size()));
  file.append(header.data(), header.size());
  file.append(payload.data(), payload.size());
  return std::string(reinterpret_cast<const char*>(file.data()), file.size());
}

std::string Issue26File() {
  const char hex[] =
      "8948544c0d0a1a0a0100010020000000010000000000000000000000f952f003484c434b010000001c0000001c00"
      "00008c681601787e7e578094ebdc0309050001000204090e020100ffffffffffffffffff0100";
  std::string bytes;
  for (size_t i = 0; hex[i] && hex[i + 1]; i += 2)
    bytes.push_back(static_cast<char>(std::stoi(std::string(hex + i, 2), nullptr, 16)));
  return bytes;
}

bool WriteSampleProfile(const std::string& path, int chunks) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  format::Writer w;
  bool ok = w.begin(fd, format::kFeatureSamples | format::kFeatureTrace | format::kFeatureHeap);
  uint64_t argv[2] = {w.internString("prog"), w.internString("--fast")};
  format::ProcessRecord process;
  process.pid = 100;
  process.ppid = 1;
  process.realtime_ns = 1'700'000'000'000'000'000ull;
  process.time = 1'000'000;
  process.exe = w.internString("/usr/bin/prog");
  process.argc = 2;
  process.argv = argv;
  process.period_ns = 1'000'000;
  process.max_depth = 64;
  process.trace = format::TraceMode::kCounts;
  w.add(process);
  uint8_t build_id[4] = {0xde, 0xad, 0xbe, 0xef};
  w.add(format::ModuleLoadRecord{1'000'100, 1, w.internString("/usr/bin/prog"), 0x1000, 0x1000,
                                 0x4000, 0, build_id, 4});
  w.add(format::ThreadStartRecord{1'000'200, 100, w.internString("main"), 0});
  int per_chunk = 40;
  uint64_t t = 2'000'000;
  for (int c = 0; c < chunks; ++c) {
    for (int i = 0; i < per_chunk; ++i) {
      uint64_t node = w.internStackNode(0, 0x1100);
      node = w.internStackNode(node, 0x1200 + uint64_t(i % 3) * 0x10);
      t += 1'000'000;
      w.add(format::SampleRecord{t, 100, node, 1, 0});
    }
    w.add(format::MarkRecord{t, 100, w.internString("phase")});
    w.add(
        format::AllocRecord{t, 100, 0x5000 + uint64_t(c) * 64, 48, 1, format::AllocKind::kMalloc});
    w.add(format::FreeRecord{t + 1, 100, 0x5000 + uint64_t(c) * 64, format::FreeKind::kFree, 0});
    ok = w.flush() && ok;
  }
  w.add(format::StateRecord{t, 100, 0, format::StateSource::kApi});
  w.add(format::TraceFunctionRecord{1, 0x1100});
  uint64_t triples[3] = {0, 1, 7};
  w.add(format::CallCountsRecord{t, 100, 3, 1, triples});
  uint64_t quads[8] = {0x1234, 0x1105, 1, 40, 0x1150, 0x1105, 1, 2};
  w.add(format::CallSiteCountsRecord{t, 100, 2, quads});
  uint8_t events[4] = {2, 5, 3, 9};
  w.add(format::TraceEventsRecord{100, 1000, 2, events, 4});
  // hotline_size(42) in that call (its entry event is at tick 1000 + 5), and a sweep's run size.
  w.add(format::SizeRecord{t, 100, 1, 1005, 42});
  w.add(format::SizeRecord{t, 0, 0, 0, 7});
  w.add(format::ThreadEndRecord{t, 100, 123'456'789});
  w.add(format::StatsRecord{t, w.internString("samples"), uint64_t(chunks * per_chunk)});
  w.add(format::DisabledRecord{t, w.internString("a test reason")});
  w.add(format::EndRecord{t, format::EndHow::kExit, 0});
  ok = w.flush() && ok;
  uint64_t pairs[4] = {10, 5, 12, 0};
  format::Writer append;
  append.beginAppend(fd);
  append.add(format::LineCountsRecord{"prog.c", "/usr/bin/prog", 2, pairs});
  append.add(format::FunctionCountRecord{"prog.c", "main", 9, 14, 1});
  uint64_t rows[8] = {10, 25, 0, 0, 12, 3, 4, 1};
  append.add(format::LineInstructionsRecord{"prog.c", "/usr/bin/prog", "main", 2, rows});
  append.add(format::FunctionInstructionsRecord{"prog.c", "main", "/usr/bin/prog", 28, 4, true});
  ok = append.flush() && ok;
  close(fd);
  return ok && !w.failed() && !append.failed();
}

bool WriteDeepRecursionProfile(const std::string& path, uint32_t depth) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  format::Writer w;
  bool ok = w.begin(fd, format::kFeatureSamples);
  uint64_t argv[2] = {w.internString("perl"), w.internString("x.pl")};
  format::ProcessRecord process;
  process.pid = 7;
  process.time = 1'000;
  process.exe = w.internString("/usr/bin/perl");
  process.argc = 2;
  process.argv = argv;
  process.period_ns = 1;  // the samples' weights are nanoseconds
  w.add(process);
  w.add(format::ThreadStartRecord{1'000, 7, 0, 0});
  w.add(format::FrameRecord{1, "main", "x.pl", 5, "x.pl", 0, "perl", 0});
  w.add(format::FrameRecord{2, "main::f", "x.pl", 3, "x.pl", 2, "perl", 0});
  uint64_t node = w.internStackNode(0, format::kNamedFrameTag | 1);
  for (uint32_t level = 1; level <= depth; ++level) {
    if (level > 1) node = w.internStackNode(node, format::kNamedFrameTag | 2);
    w.add(format::SampleRecord{2'000 + level, 7, node, 1'000, 0});
  }
  w.add(format::ThreadEndRecord{3'000'000, 7, format::kCpuUnknown});
  w.add(format::EndRecord{3'000'000, format::EndHow::kExit, 0});
  ok = w.flush() && ok;
  return close(fd) == 0 && ok;
}

bool WriteRegressionProfile(const std::string& path, uint64_t slow_samples, uint32_t seed,
                            const std::string& exe) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  format::Writer w;
  bool ok = w.begin(fd, format::kFeatureSamples);
  uint64_t argv[1] = {w.internString("regression")};
  format::ProcessRecord process;
  process.pid = 9;
  process.time = 1'000;
  process.exe = w.internString(exe.c_str());
  process.argc = 1;
  process.argv = argv;
  process.period_ns = 100'000;  // 10 kHz
  w.add(process);
  w.add(format::ThreadStartRecord{1'000, 9, 0, 0});
  w.add(format::FrameRecord{1, "main", "regression.c", 60, "regression.c", 55, "regression", 0});
  w.add(format::FrameRecord{2, "slow_path", "regression.c", 30, "regression.c", 28, "regression", 0});
  uint64_t main_node = w.internStackNode(0, format::kNamedFrameTag | 1);
  uint64_t time = 2'000, samples = slow_samples;
  // One record a sample, as a sampler writes them: a weight is not a count of samples.
  auto sampled = [&](uint64_t node, uint64_t count) {
    for (uint64_t k = 0; k < count; ++k) w.add(format::SampleRecord{time++, 9, node, 1, 0});
  };
  sampled(w.internStackNode(main_node, format::kNamedFrameTag | 2), slow_samples);
  std::vector<std::string> names;
  uint32_t state = seed * 2654435761u + 1;
  for (uint64_t n = 0; n < 30; ++n) {
    names.push_back("other_" + std::to_string(n));
    uint64_t id = 3 + n;
    w.add(format::FrameRecord{id, names.back().c_str(), "regression.c", 40 + n, "regression.c",
                              38, "regression", 0});
    state = state * 1664525u + 1013904223u;  // a fixed sequence per seed
    uint64_t count = 300 - 9 + (state >> 8) % 19;  // 300 ± 3%
    sampled(w.internStackNode(main_node, format::kNamedFrameTag | id), count);
    samples += count;
  }
  uint64_t end = time + samples * process.period_ns;
  w.add(format::ThreadEndRecord{end, 9, samples * process.period_ns});
  w.add(format::EndRecord{end, format::EndHow::kExit, 0});
  ok = w.flush() && ok;
  return close(fd) == 0 && ok;
}

}  // namespace hotline::testing

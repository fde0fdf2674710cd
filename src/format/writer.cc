#include "format/writer.h"

#include <errno.h>
#include <sys/uio.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_createCCtx_advanced: zstd allocates through our malloc
#include <zstd.h>

#include <cstdlib>
#include <cstring>

#include "base/crc32c.h"

namespace hotline::format {

struct Writer::StringSlot {
  uint64_t hash;  // 0 = empty slot
  uint64_t id;
  size_t offset, size;  // in string_arena_
};

struct Writer::NodeSlot {
  uint64_t parent, address;
  uint64_t id;  // 0 = empty slot
};

namespace {

uint64_t HashBytes(const char* p, size_t n) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<uint8_t>(p[i])) * 1099511628211ull;
  return h | 1;  // never 0, which marks an empty slot
}

uint64_t HashNode(uint64_t parent, uint64_t address) {
  uint64_t h = parent * 0x9E3779B97F4A7C15ull ^ (address + 0x632BE59BD9B4E019ull);
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 32);
}

constexpr int kZstdLevel = 1;
// A 16 KiB match table (level 1's default is larger) stays in the L1 cache: on timed trace
// events, a third of a byte each, it compresses 15% faster for 3% more bytes.
constexpr int kZstdHashLog = 12;
constexpr size_t kAutoFlushBytes = 8u << 20;  // the writer runs beside the program: favour speed

}  // namespace

Writer::Writer() = default;

Writer::~Writer() {
  if (zstd_) ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(zstd_));
  std::free(strings_);
  std::free(nodes_);
}

bool Writer::beginAppend(int fd, uint64_t id_base) {
  fd_ = fd;
  id_base_ = id_base;
  return true;
}

bool Writer::begin(int fd, uint64_t features) {
  fd_ = fd;
  ByteBuffer header;
  header.append(kMagic, sizeof kMagic);
  header.u16(kVersion);
  header.u16(kMinReaderVersion);
  header.u32(kFileHeaderSize);
  header.u64(features);
  header.u32(0);
  if (header.failed()) {
    fail("out of memory");
    return false;
  }
  header.u32(Crc32c(header.data(), header.size()));
  return writeAll(header.data(), header.size());
}

void Writer::reset() {
  chunk_.clear();
  record_.clear();
  last_time_ = 0;
  // Freed rather than cleared: after fork the tables are the parent's pages, and clearing them
  // would copy every one of them into the child.
  std::free(strings_);
  strings_ = nullptr;
  strings_capacity_ = strings_count_ = 0;
  string_arena_.clear();
  std::free(nodes_);
  nodes_ = nullptr;
  nodes_capacity_ = nodes_count_ = 0;
  bytes_written_ = 0;
  error_ = nullptr;
}

bool Writer::growStrings() {
  size_t capacity = strings_capacity_ ? strings_capacity_ * 2 : 256;
  auto* grown = static_cast<StringSlot*>(std::calloc(capacity, sizeof(StringSlot)));
  if (!grown) return false;
  for (size_t i = 0; i < strings_capacity_; ++i) {
    if (!strings_[i].hash) continue;
    size_t j = strings_[i].hash & (capacity - 1);
    while (grown[j].hash) j = (j + 1) & (capacity - 1);
    grown[j] = strings_[i];
  }
  std::free(strings_);
  strings_ = grown;
  strings_capacity_ = capacity;
  return true;
}

uint64_t Writer::internString(const char* text) {
  return text ? internString(text, std::strlen(text)) : 0;
}

uint64_t Writer::internString(const char* text, size_t size) {
  if ((strings_count_ + 1) * 2 > strings_capacity_ && !growStrings()) {
    fail("out of memory");
    return 0;
  }
  uint64_t hash = HashBytes(text, size);
  size_t mask = strings_capacity_ - 1;
  size_t i = hash & mask;
  for (; strings_[i].hash; i = (i + 1) & mask) {
    const StringSlot& s = strings_[i];
    if (s.hash == hash && s.size == size &&
        std::memcmp(string_arena_.data() + s.offset, text, size) == 0) {
      return s.id;
    }
  }
  size_t offset = string_arena_.size();
  string_arena_.append(text, size);
  if (string_arena_.failed()) {
    fail("out of memory");
    return 0;
  }
  uint64_t id = id_base_ + ++strings_count_;
  strings_[i] = StringSlot{hash, id, offset, size};
  addString(id, text, size);
  return id;
}

bool Writer::growNodes() {
  size_t capacity = nodes_capacity_ ? nodes_capacity_ * 2 : 4096;
  auto* grown = static_cast<NodeSlot*>(std::calloc(capacity, sizeof(NodeSlot)));
  if (!grown) return false;
  for (size_t i = 0; i < nodes_capacity_; ++i) {
    if (!nodes_[i].id) continue;
    size_t j = HashNode(nodes_[i].parent, nodes_[i].address) & (capacity - 1);
    while (grown[j].id) j = (j + 1) & (capacity - 1);
    grown[j] = nodes_[i];
  }
  std::free(nodes_);
  nodes_ = grown;
  nodes_capacity_ = capacity;
  return true;
}

uint64_t Writer::internStackNode(uint64_t parent, uint64_t address) {
  if ((nodes_count_ + 1) * 2 > nodes_capacity_ && !growNodes()) {
    fail("out of memory");
    return 0;
  }
  size_t mask = nodes_capacity_ - 1;
  size_t i = HashNode(parent, address) & mask;
  for (; nodes_[i].id; i = (i + 1) & mask) {
    if (nodes_[i].parent == parent && nodes_[i].address == address) return nodes_[i].id;
  }
  uint64_t id = id_base_ + ++nodes_count_;
  nodes_[i] = NodeSlot{parent, address, id};
  addStackNode(id, parent, address);
  return id;
}

void Writer::add(const StackNodesRecord& r) {
  beginRecord(RecordKind::kStackNodes);
  record_.varint(r.first_id);
  record_.varint(r.tag);
  record_.varint(r.count);
  // Each parent as its distance below the node's id (the id itself for none): a byte or two.
  for (uint64_t i = 0; i < r.count; ++i) {
    record_.varint(r.first_id + i - r.parents[i]);
    record_.varint(r.addresses[i]);
  }
  nodes_count_ += r.count;
  endRecord();
}

void Writer::add(const SamplesRecord& r) {
  beginRecord(RecordKind::kSamples);
  time(r.time);
  record_.varint(r.tid);
  record_.varint(r.flags);
  record_.varint(r.count);
  // Each node as its difference from the previous one's (the first from 0).
  uint64_t previous = 0;
  for (uint64_t i = 0; i < r.count; ++i) {
    record_.svarint(int64_t(r.pairs[2 * i] - previous));
    previous = r.pairs[2 * i];
    record_.varint(r.pairs[2 * i + 1]);
  }
  endRecord();
}

void Writer::beginRecord(RecordKind kind) {
  if (chunk_.size() == 0) chunk_.varint(last_time_);  // the chunk's base time
  kind_ = kind;
  record_.clear();
}

void Writer::endRecord() {
  chunk_.varint(static_cast<uint64_t>(kind_));
  chunk_.varint(record_.size());
  chunk_.append(record_.data(), record_.size());
  if (chunk_.failed() || record_.failed()) fail("out of memory");
  if (chunk_.size() >= kAutoFlushBytes) flush();  // keep chunks far below kMaxChunkBytes
}

void Writer::time(uint64_t t) {
  record_.svarint(static_cast<int64_t>(t - last_time_));
  last_time_ = t;
}

void Writer::addString(uint64_t id, const char* text, size_t size) {
  beginRecord(RecordKind::kString);
  record_.varint(id);
  record_.varint(size);
  record_.append(text, size);
  endRecord();
}

void Writer::addStackNode(uint64_t id, uint64_t parent, uint64_t address) {
  beginRecord(RecordKind::kStackNode);
  record_.varint(id);
  record_.varint(parent);
  record_.varint(address);
  endRecord();
}

void Writer::add(const ProcessRecord& r) {
  beginRecord(RecordKind::kProcess);
  record_.varint(r.pid);
  record_.varint(r.ppid);
  record_.varint(r.realtime_ns);
  time(r.time);
  record_.varint(r.exe);
  record_.varint(r.argc);
  for (uint64_t i = 0; i < r.argc; ++i) record_.varint(r.argv[i]);
  record_.varint(static_cast<uint64_t>(r.clock));
  record_.varint(static_cast<uint64_t>(r.sampler));
  record_.varint(r.period_ns);
  record_.varint(static_cast<uint64_t>(r.unwinder));
  record_.varint(r.max_depth);
  record_.varint(r.flags);
  record_.varint(static_cast<uint64_t>(r.trace));
  record_.varint(r.trace_tick_ns_q32);
  endRecord();
}

void Writer::add(const ModuleLoadRecord& r) {
  beginRecord(RecordKind::kModuleLoad);
  time(r.time);
  record_.varint(r.id);
  record_.varint(r.path);
  record_.varint(r.bias);
  record_.varint(r.start);
  record_.varint(r.size);
  record_.varint(r.file_offset);
  record_.varint(r.build_id_size);
  record_.append(r.build_id, r.build_id_size);
  endRecord();
}

void Writer::add(const ModuleUnloadRecord& r) {
  beginRecord(RecordKind::kModuleUnload);
  time(r.time);
  record_.varint(r.id);
  endRecord();
}

void Writer::add(const ThreadStartRecord& r) {
  beginRecord(RecordKind::kThreadStart);
  time(r.time);
  record_.varint(r.tid);
  record_.varint(r.name);
  record_.varint(r.flags);
  endRecord();
}

void Writer::add(const ThreadEndRecord& r) {
  beginRecord(RecordKind::kThreadEnd);
  time(r.time);
  record_.varint(r.tid);
  record_.varint(r.cpu_ns);
  endRecord();
}

void Writer::add(const ThreadNameRecord& r) {
  beginRecord(RecordKind::kThreadName);
  time(r.time);
  record_.varint(r.tid);
  record_.varint(r.name);
  endRecord();
}

void Writer::add(const SampleRecord& r) {
  beginRecord(RecordKind::kSample);
  time(r.time);
  record_.varint(r.tid);
  record_.varint(r.node);
  record_.varint(r.weight);
  record_.varint(r.flags);
  endRecord();
}

void Writer::add(const MarkRecord& r) {
  beginRecord(RecordKind::kMark);
  time(r.time);
  record_.varint(r.tid);
  record_.varint(r.label);
  endRecord();
}

void Writer::add(const StateRecord& r) {
  beginRecord(RecordKind::kState);
  time(r.time);
  record_.varint(r.tid);
  record_.varint(r.on);
  record_.varint(static_cast<uint64_t>(r.source));
  endRecord();
}

void Writer::add(const StatsRecord& r) {
  beginRecord(RecordKind::kStats);
  time(r.time);
  record_.varint(r.key);
  record_.varint(r.value);
  endRecord();
}

void Writer::add(const DisabledRecord& r) {
  beginRecord(RecordKind::kDisabled);
  time(r.time);
  record_.varint(r.reason);
  endRecord();
}

void Writer::add(const EndRecord& r) {
  beginRecord(RecordKind::kEnd);
  time(r.time);
  record_.varint(static_cast<uint64_t>(r.how));
  record_.varint(r.code);
  endRecord();
}

void Writer::add(const TraceFunctionRecord& r) {
  beginRecord(RecordKind::kTraceFunction);
  record_.varint(r.id);
  record_.varint(r.address);
  if (r.seen) record_.varint(r.seen);
  endRecord();
}

void Writer::add(const CallCountsRecord& r) {
  beginRecord(RecordKind::kCallCounts);
  time(r.time);
  record_.varint(r.tid);
  record_.varint(r.max_depth);
  record_.varint(r.count);
  for (uint64_t i = 0; i < r.count * 3; ++i) record_.varint(r.triples[i]);
  endRecord();
}

void Writer::add(const CallSiteCountsRecord& r) {
  beginRecord(RecordKind::kCallSiteCounts);
  time(r.time);
  record_.varint(r.tid);
  record_.varint(r.count);
  for (uint64_t i = 0; i < r.count * 4; ++i) record_.varint(r.quads[i]);
  endRecord();
}

void Writer::add(const TraceEventsRecord& r) {
  beginRecord(r.short_code ? RecordKind::kTraceEventsShort : RecordKind::kTraceEvents);
  record_.varint(r.tid);
  record_.varint(r.base_tick);
  record_.varint(r.events);
  record_.varint(r.packed_size);
  record_.append(r.packed, r.packed_size);
  endRecord();
}

void Writer::add(const AllocRecord& r) {
  beginRecord(RecordKind::kAlloc);
  time(r.time);
  record_.varint(r.tid);
  record_.varint(r.address);
  record_.varint(r.size);
  record_.varint(r.node);
  record_.varint(static_cast<uint64_t>(r.kind));
  if (r.sample_bytes) record_.varint(r.sample_bytes);
  endRecord();
}

void Writer::add(const FreeRecord& r) {
  beginRecord(RecordKind::kFree);
  time(r.time);
  record_.varint(r.tid);
  record_.varint(r.address);
  record_.varint(static_cast<uint64_t>(r.kind));
  record_.varint(r.size);
  endRecord();
}

void Writer::add(const LineCountsRecord& r) {
  beginRecord(RecordKind::kLineCounts);
  record_.varint(r.file.size());
  record_.append(r.file.data(), r.file.size());
  record_.varint(r.module.size());
  record_.append(r.module.data(), r.module.size());
  record_.varint(r.count);
  uint64_t previous_line = 0;
  for (uint64_t i = 0; i < r.count; ++i) {
    record_.svarint(static_cast<int64_t>(r.pairs[2 * i] - previous_line));
    previous_line = r.pairs[2 * i];
    record_.varint(r.pairs[2 * i + 1]);
  }
  endRecord();
}

void Writer::add(const FunctionCountRecord& r) {
  beginRecord(RecordKind::kFunctionCount);
  record_.varint(r.file.size());
  record_.append(r.file.data(), r.file.size());
  record_.varint(r.name.size());
  record_.append(r.name.data(), r.name.size());
  record_.varint(r.start_line);
  record_.varint(r.end_line);
  record_.varint(r.executions);
  endRecord();
}

void Writer::add(const LineInstructionsRecord& r) {
  beginRecord(RecordKind::kLineInstructions);
  for (std::string_view text : {r.file, r.module, r.function}) {
    record_.varint(text.size());
    record_.append(text.data(), text.size());
  }
  record_.varint(r.count);
  uint64_t previous_line = 0;
  for (uint64_t i = 0; i < r.count; ++i) {
    const uint64_t* row = r.rows + 4 * i;
    record_.svarint(static_cast<int64_t>(row[0] - previous_line));
    previous_line = row[0];
    record_.varint(row[1]);
    record_.varint(row[2] << 1 | (row[3] ? 1 : 0));
  }
  endRecord();
}

void Writer::add(const FunctionInstructionsRecord& r) {
  beginRecord(RecordKind::kFunctionInstructions);
  for (std::string_view text : {r.file, r.name, r.module}) {
    record_.varint(text.size());
    record_.append(text.data(), text.size());
  }
  record_.varint(r.executed);
  record_.varint(r.uncounted << 1 | (r.unbounded ? 1 : 0));
  endRecord();
}

void Writer::add(const NoteRecord& r) {
  beginRecord(RecordKind::kNote);
  time(r.time);
  record_.varint(r.text.size());
  record_.append(r.text.data(), r.text.size());
  endRecord();
}

void Writer::add(const WatchRecord& r) {
  beginRecord(RecordKind::kWatch);
  time(r.time);
  record_.varint(r.id);
  record_.varint(r.name.size());
  record_.append(r.name.data(), r.name.size());
  record_.varint(r.address);
  record_.varint(r.size);
  record_.varint(uint64_t(r.type));
  record_.varint(r.flags);
  record_.varint(r.enumerator_count);
  for (uint64_t i = 0; i < r.enumerator_count; ++i) {
    record_.svarint(r.enumerators[i].value);
    record_.varint(r.enumerators[i].name.size());
    record_.append(r.enumerators[i].name.data(), r.enumerators[i].name.size());
  }
  endRecord();
}

void Writer::add(const WatchHitsRecord& r) {
  beginRecord(RecordKind::kWatchHits);
  time(r.time);
  record_.varint(r.tid);
  record_.varint(r.hit_count);
  uint64_t previous = r.time;
  for (uint64_t i = 0; i < r.hit_count; ++i) {
    const WatchHit& hit = r.hits[i];
    record_.varint(hit.watch);
    record_.svarint(static_cast<int64_t>(hit.time - previous));
    previous = hit.time;
    record_.varint(hit.value);
    record_.varint(hit.ip);
  }
  record_.varint(r.total_count);
  for (uint64_t i = 0; i < r.total_count; ++i) {
    record_.varint(r.totals[i].watch);
    record_.varint(r.totals[i].writes);
    record_.varint(r.totals[i].reads);
  }
  endRecord();
}

void Writer::add(const FrameRecord& r) {
  beginRecord(RecordKind::kFrame);
  record_.varint(r.id);
  for (std::string_view text : {r.name, r.file}) {
    record_.varint(text.size());
    record_.append(text.data(), text.size());
  }
  record_.varint(r.line);
  record_.varint(r.def_file.size());
  record_.append(r.def_file.data(), r.def_file.size());
  record_.varint(r.def_line);
  record_.varint(r.module.size());
  record_.append(r.module.data(), r.module.size());
  record_.varint(r.flags);
  endRecord();
}

void Writer::add(const FramesRecord& r) {
  beginRecord(RecordKind::kFrames);
  record_.varint(r.string_count);
  for (uint64_t i = 0; i < r.string_count; ++i) {
    record_.varint(r.strings[i].size());
    record_.append(r.strings[i].data(), r.strings[i].size());
  }
  record_.varint(r.count);
  uint64_t previous = 0;  // each id as its difference from the previous one's (the first from 0)
  for (uint64_t i = 0; i < r.count; ++i) {
    const FramesEntry& f = r.frames[i];
    record_.svarint(int64_t(f.id - previous));
    previous = f.id;
    for (uint64_t v : {f.name, f.file, f.line, f.def_file, f.def_line, f.module, f.flags})
      record_.varint(v);
  }
  endRecord();
}

void Writer::add(const SourceRecord& r) {
  beginRecord(RecordKind::kSource);
  for (std::string_view text : {r.file, r.text}) {
    record_.varint(text.size());
    record_.append(text.data(), text.size());
  }
  endRecord();
}

void Writer::add(const SizeRecord& r) {
  beginRecord(RecordKind::kSize);
  time(r.time);
  record_.varint(r.tid);
  record_.varint(r.function);
  record_.varint(r.entry_tick);
  record_.varint(r.n);
  endRecord();
}

void Writer::add(const TexCommandsRecord& r) {
  beginRecord(RecordKind::kTexCommands);
  time(r.time);
  record_.varint(r.count);
  for (uint64_t i = 0; i < r.count; ++i) {
    record_.varint(r.rows[3 * i]);
    record_.varint(r.names[i].size());
    record_.append(r.names[i].data(), r.names[i].size());
    record_.varint(r.rows[3 * i + 1]);
    record_.varint(r.rows[3 * i + 2]);
  }
  endRecord();
}

bool Writer::flush() {
  if (failed()) return false;
  if (chunk_.size() == 0) return true;
  if (!zstd_) {
    // zstd's own allocations go through this library's malloc, not through the global one: in
    // the runtime that is the runtime's, so a program with an allocator of its own never sees them.
    zstd_ = ZSTD_createCCtx_advanced(
        ZSTD_customMem{[](void*, size_t size) { return std::malloc(size); },
                       [](void*, void* p) { std::free(p); }, nullptr});
    if (zstd_) {
      ZSTD_CCtx_setParameter(static_cast<ZSTD_CCtx*>(zstd_), ZSTD_c_compressionLevel, kZstdLevel);
      ZSTD_CCtx_setParameter(static_cast<ZSTD_CCtx*>(zstd_), ZSTD_c_hashLog, kZstdHashLog);
    }
  }

  const uint8_t* payload = chunk_.data();
  size_t stored = chunk_.size();
  uint16_t flags = 0;
  if (zstd_) {
    size_t bound = ZSTD_compressBound(chunk_.size());
    compressed_.clear();
    if (uint8_t* out = compressed_.prepare(bound)) {
      size_t n =
          ZSTD_compress2(static_cast<ZSTD_CCtx*>(zstd_), out, bound, chunk_.data(), chunk_.size());
      if (!ZSTD_isError(n) && n < chunk_.size()) {
        payload = out;
        stored = n;
        flags = kChunkZstd;
      }
    }
  }

  // On the stack: the runtime flushes from the program's own threads, where a buffer made and
  // freed by every flush would be a 4 KiB malloc and free in the program's heap each time.
  static_assert(sizeof kChunkSync + 2 + 2 + 4 * 4 == kChunkHeaderSize);
  uint8_t header[kChunkHeaderSize];
  size_t at = 0;
  auto put = [&](uint64_t value, size_t bytes) {
    for (size_t i = 0; i < bytes; ++i) header[at++] = uint8_t(value >> (8 * i));
  };
  for (uint8_t c : kChunkSync) put(c, 1);
  put(static_cast<uint16_t>(ChunkType::kRecords), 2);
  put(flags, 2);
  put(static_cast<uint32_t>(stored), 4);
  put(static_cast<uint32_t>(chunk_.size()), 4);
  put(Crc32c(payload, stored), 4);
  put(Crc32c(header, at), 4);
  bool ok = writeAll(header, sizeof header, payload, stored);
  chunk_.clear();
  return ok;
}

// One system call for the whole chunk where the kernel takes it: two writers appending to one
// file (the runtime and the recorder, each with O_APPEND) then never interleave inside a chunk.
bool Writer::writeAll(const void* data, size_t size, const void* more, size_t more_size) {
  iovec parts[2] = {{const_cast<void*>(data), size}, {const_cast<void*>(more), more_size}};
  int first = 0;
  while (first < 2) {
    if (parts[first].iov_len == 0) {
      ++first;
      continue;
    }
    ssize_t n = ::writev(fd_, parts + first, 2 - first);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      fail("write to the profile failed");
      return false;
    }
    bytes_written_ += static_cast<uint64_t>(n);
    for (size_t left = size_t(n); left > 0 && first < 2;) {
      size_t take = left < parts[first].iov_len ? left : parts[first].iov_len;
      parts[first].iov_base = static_cast<uint8_t*>(parts[first].iov_base) + take;
      parts[first].iov_len -= take;
      left -= take;
      if (parts[first].iov_len == 0) ++first;
    }
  }
  return true;
}

}  // namespace hotline::format

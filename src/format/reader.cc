#include "format/reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "base/crc32c.h"
#include "base/varint.h"

namespace hotline::format {
namespace {

constexpr size_t kMaxProblems = 20;

// A bound as docs/format.md writes it: 2^60, 2^32 − 1, or the number.
std::string BoundText(uint64_t bound) {
  for (int bits = 1; bits < 64; ++bits) {
    if (bound == uint64_t{1} << bits) return "2^" + std::to_string(bits);
    if (bound == (uint64_t{1} << bits) - 1 && bits >= 16)
      return "2^" + std::to_string(bits) + " - 1";
  }
  return std::to_string(bound);
}

uint16_t Le16(const uint8_t* p) { return uint16_t(p[0] | p[1] << 8); }
uint32_t Le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
uint64_t Le64(const uint8_t* p) { return Le32(p) | uint64_t(Le32(p + 4)) << 32; }

struct ChunkHeader {
  uint16_t type, flags;
  uint32_t stored_len, raw_len, payload_crc;
};

// A chunk header is plausible when its sync, CRC and lengths check.
bool ParseChunkHeader(const uint8_t* p, ChunkHeader* h) {
  if (std::memcmp(p, kChunkSync, sizeof kChunkSync) != 0) return false;
  if (Crc32c(p, 20) != Le32(p + 20)) return false;
  h->type = Le16(p + 4);
  h->flags = Le16(p + 6);
  h->stored_len = Le32(p + 8);
  h->raw_len = Le32(p + 12);
  h->payload_crc = Le32(p + 16);
  return h->stored_len <= kMaxChunkBytes && h->raw_len <= kMaxChunkBytes;
}

// Reads a varint at `p`, not past `end`; returns where it ends, nullptr when the bytes are not
// one (ByteCursor::varint's rules). The one-byte case, most of a record's fields, inline.
const uint8_t* LongVarint(const uint8_t* p, const uint8_t* end, uint64_t* out) {
  ByteCursor in(p, size_t(end - p));
  if (!in.varint(out)) return nullptr;
  return end - in.remaining();
}
inline const uint8_t* Varint(const uint8_t* p, const uint8_t* end, uint64_t* out) {
  if (p < end && *p < 0x80) {
    *out = *p;
    return p + 1;
  }
  return LongVarint(p, end, out);
}

class PayloadDecoder {
 public:
  PayloadDecoder(RecordVisitor& visitor, ReadStats& stats, std::string_view name)
      : visitor_(visitor), stats_(stats), name_(name) {}

  // Decodes one records payload; returns false if it is cut short (the rest is dropped).
  bool decode(const uint8_t* data, size_t size, uint64_t chunk_offset) {
    const uint8_t* end = data + size;
    const uint8_t* p = Varint(data, end, &time_);
    if (!p || time_ > kMaxTime) return false;
    while (p < end) {
      uint64_t kind, length;
      if (!(p = Varint(p, end, &kind)) || !(p = Varint(p, end, &length)) ||
          length > uint64_t(end - p)) {
        note("chunk at offset " + std::to_string(chunk_offset) + ": record runs past its chunk");
        return false;
      }
      const uint8_t* body = p;
      p += length;
      ++stats_.records;
      why_.clear();
      int result = dispatch(kind, body, size_t(length));
      if (result < 0) {
        ++stats_.malformed_records;
        note("chunk at offset " + std::to_string(chunk_offset) + ": malformed record of kind " +
             std::to_string(kind) + (why_.empty() ? "" : " (" + why_ + ")"));
      } else if (result == 0) {
        ++stats_.unknown_records;
      }
    }
    return true;
  }

  void note(std::string line) {
    if (stats_.problems.size() < kMaxProblems) stats_.problems.push_back(std::move(line));
  }

 private:
  bool t(ByteCursor& in, uint64_t* out) {
    int64_t delta;
    if (!in.svarint(&delta)) return false;
    time_ += static_cast<uint64_t>(delta);
    *out = time_;
    return within(time_, kMaxTime, "time");
  }

  // Whether `value` is at most `max`; if not, says so for the record's problem line.
  bool within(uint64_t value, uint64_t max, const char* what) {
    if (value <= max) return true;
    why_ = std::string(what) + " " + std::to_string(value) + " is beyond " + BoundText(max);
    return false;
  }
  // Whether a run's running sum `*sum` can take `value` more without passing `max`; adds it.
  bool addWithin(uint64_t* sum, uint64_t value, uint64_t max, const char* what) {
    if (value > max || *sum > max - value) {
      why_ = std::string(what) + " would pass " + BoundText(max);
      return false;
    }
    *sum += value;
    return true;
  }
  // The time a sample of `weight` stands for, weight × the period of the PROCESS record read
  // last (kAssumedPeriodNs before any: the model's rule), checked against the bounds of one
  // sample and of the run's samples together.
  bool sampleTime(uint64_t weight, uint64_t* run_ns) {
    uint64_t ns;
    if (__builtin_mul_overflow(std::max<uint64_t>(weight, 1), period_ns_, &ns) ||
        ns > kMaxSampleNs) {
      why_ = "sample weight " + std::to_string(weight) + " × period " + std::to_string(period_ns_) +
             " ns is beyond " + BoundText(kMaxSampleNs) + " ns";
      return false;
    }
    return addWithin(run_ns, ns, kMaxRunSampleNs, "the time of the run's samples in ns");
  }

  bool text(ByteCursor& in, std::string_view* out) {
    uint64_t size;
    const uint8_t* bytes;
    if (!in.varint(&size) || !in.bytes(size, &bytes)) return false;
    *out = std::string_view(reinterpret_cast<const char*>(bytes), size);
    return true;
  }

  // The heap's records, most of a heap profile's, without a cursor: 1 = delivered, -1 = malformed.
  int allocRecord(const uint8_t* p, const uint8_t* end) {
    AllocRecord r;
    uint64_t delta, kind;
    if (!(p = Varint(p, end, &delta))) return -1;
    time_ += static_cast<uint64_t>(UnZigZag(delta));
    r.time = time_;
    if (!(p = Varint(p, end, &r.tid)) || !(p = Varint(p, end, &r.address)) ||
        !(p = Varint(p, end, &r.size)) || !(p = Varint(p, end, &r.node)) ||
        !(p = Varint(p, end, &kind)))
      return -1;
    if (p < end && !Varint(p, end, &r.sample_bytes)) return -1;  // optional: sampled mode
    if (!within(r.time, kMaxTime, "time") || !within(kind, kMaxEnum, "kind") ||
        !within(r.size, kMaxBlockBytes, "size") ||
        !within(r.sample_bytes, kMaxBlockBytes, "sample_bytes") ||
        !addWithin(&run_alloc_bytes_, r.size, kMaxRunAllocBytes, "the run's allocated bytes"))
      return -1;
    r.kind = static_cast<AllocKind>(kind);
    visitor_.onAlloc(r);
    return 1;
  }
  int freeRecord(const uint8_t* p, const uint8_t* end) {
    FreeRecord r;
    uint64_t delta, kind;
    if (!(p = Varint(p, end, &delta))) return -1;
    time_ += static_cast<uint64_t>(UnZigZag(delta));
    r.time = time_;
    if (!(p = Varint(p, end, &r.tid)) || !(p = Varint(p, end, &r.address)) ||
        !(p = Varint(p, end, &kind)) || !Varint(p, end, &r.size))
      return -1;
    if (!within(r.time, kMaxTime, "time") || !within(kind, kMaxEnum, "kind") ||
        !within(r.size, kMaxBlockBytes, "size"))
      return -1;
    r.kind = static_cast<FreeKind>(kind);
    visitor_.onFree(r);
    return 1;
  }

  // 1 = delivered, 0 = unknown kind, -1 = malformed.
  int dispatch(uint64_t kind, const uint8_t* body, size_t length) {
    ByteCursor in(body, length);
    switch (static_cast<RecordKind>(kind)) {
      case RecordKind::kProcess: {
        ProcessRecord r;
        uint64_t clock, sampler, unwinder;
        if (!in.varint(&r.pid) || !in.varint(&r.ppid) || !in.varint(&r.realtime_ns) ||
            !t(in, &r.time) || !in.varint(&r.exe) || !in.varint(&r.argc))
          return -1;
        if (r.argc > in.remaining()) return -1;  // each id takes at least one byte
        argv_.resize(r.argc);
        for (auto& a : argv_)
          if (!in.varint(&a)) return -1;
        r.argv = argv_.data();
        if (!in.varint(&clock) || !in.varint(&sampler) || !in.varint(&r.period_ns) ||
            !in.varint(&unwinder) || !in.varint(&r.max_depth) || !in.varint(&r.flags))
          return -1;
        if (!within(r.realtime_ns, kMaxTime, "realtime_ns") || !within(clock, kMaxEnum, "clock") ||
            !within(sampler, kMaxEnum, "sampler") || !within(unwinder, kMaxEnum, "unwinder") ||
            !within(r.period_ns, kMaxSampleNs, "period_ns") ||
            !within(r.max_depth, kMaxDepth, "max_depth"))
          return -1;
        r.clock = static_cast<ClockMode>(clock);
        r.sampler = static_cast<Sampler>(sampler);
        r.unwinder = static_cast<Unwinder>(unwinder);
        if (!in.atEnd()) {  // trailing fields added in version 1 after the first files
          uint64_t trace;
          if (!in.varint(&trace) || !in.varint(&r.trace_tick_ns_q32)) return -1;
          if (!within(trace, kMaxEnum, "trace") ||
              !within(r.trace_tick_ns_q32, kMaxTickNsQ32, "trace_tick_ns_q32"))
            return -1;
          r.trace = static_cast<TraceMode>(trace);
        }
        period_ns_ = r.period_ns ? r.period_ns : kAssumedPeriodNs;
        visitor_.onProcess(r);
        return 1;
      }
      case RecordKind::kString: {
        StringRecord r;
        const uint8_t* text;
        if (!in.varint(&r.id) || !in.varint(&r.size) || !in.bytes(r.size, &text)) return -1;
        r.text = reinterpret_cast<const char*>(text);
        visitor_.onString(r);
        return 1;
      }
      case RecordKind::kModuleLoad: {
        ModuleLoadRecord r;
        if (!t(in, &r.time) || !in.varint(&r.id) || !in.varint(&r.path) || !in.varint(&r.bias) ||
            !in.varint(&r.start) || !in.varint(&r.size) || !in.varint(&r.file_offset) ||
            !in.varint(&r.build_id_size) || !in.bytes(r.build_id_size, &r.build_id))
          return -1;
        if (!within(r.size, ~r.start, "size (past the end of the address space)")) return -1;
        visitor_.onModuleLoad(r);
        return 1;
      }
      case RecordKind::kModuleUnload: {
        ModuleUnloadRecord r;
        if (!t(in, &r.time) || !in.varint(&r.id)) return -1;
        visitor_.onModuleUnload(r);
        return 1;
      }
      case RecordKind::kThreadStart: {
        ThreadStartRecord r;
        if (!t(in, &r.time) || !in.varint(&r.tid) || !in.varint(&r.name) || !in.varint(&r.flags))
          return -1;
        visitor_.onThreadStart(r);
        return 1;
      }
      case RecordKind::kThreadEnd: {
        ThreadEndRecord r;
        if (!t(in, &r.time) || !in.varint(&r.tid) || !in.varint(&r.cpu_ns)) return -1;
        if (r.cpu_ns != kCpuUnknown &&
            !addWithin(&run_cpu_ns_, r.cpu_ns, kMaxRunCpuNs, "the threads' CPU time in ns"))
          return -1;
        visitor_.onThreadEnd(r);
        return 1;
      }
      case RecordKind::kThreadName: {
        ThreadNameRecord r;
        if (!t(in, &r.time) || !in.varint(&r.tid) || !in.varint(&r.name)) return -1;
        visitor_.onThreadName(r);
        return 1;
      }
      case RecordKind::kStackNode: {
        StackNodeRecord r;
        if (!in.varint(&r.id) || !in.varint(&r.parent) || !in.varint(&r.address)) return -1;
        visitor_.onStackNode(r);
        return 1;
      }
      case RecordKind::kSample: {
        SampleRecord r;
        if (!t(in, &r.time) || !in.varint(&r.tid) || !in.varint(&r.node) || !in.varint(&r.weight) ||
            !in.varint(&r.flags) || !sampleTime(r.weight, &run_sample_ns_))
          return -1;
        visitor_.onSample(r);
        return 1;
      }
      case RecordKind::kStackNodes: {
        uint64_t first_id, tag, count;
        if (!in.varint(&first_id) || !in.varint(&tag) || !in.varint(&count)) return -1;
        if (count > in.remaining() / 2 || first_id == 0) return -1;  // a node is 2 bytes or more
        if (count && !within(first_id, ~uint64_t{0} - (count - 1), "first_id (ids past 2^64)"))
          return -1;
        // Whole before delivered: a malformed record delivers nothing.
        numbers_.resize(count * 2);
        for (uint64_t i = 0; i < count; ++i) {
          if (!in.varint(&numbers_[2 * i]) || !in.varint(&numbers_[2 * i + 1])) return -1;
          if (numbers_[2 * i] > first_id + i) return -1;  // a parent below id 0
        }
        for (uint64_t i = 0; i < count; ++i) {
          uint64_t id = first_id + i;
          visitor_.onStackNode(
              StackNodeRecord{id, id - numbers_[2 * i], tag | numbers_[2 * i + 1]});
        }
        return 1;
      }
      case RecordKind::kSamples: {
        SampleRecord r;
        uint64_t count;
        if (!t(in, &r.time) || !in.varint(&r.tid) || !in.varint(&r.flags) || !in.varint(&count))
          return -1;
        if (count > in.remaining() / 2) return -1;  // a sample is 2 bytes or more
        numbers_.resize(count * 2);
        for (auto& v : numbers_)
          if (!in.varint(&v)) return -1;
        // Whole before delivered: a malformed record delivers nothing.
        uint64_t run_ns = run_sample_ns_;
        for (uint64_t i = 0; i < count; ++i)
          if (!sampleTime(numbers_[2 * i + 1], &run_ns)) return -1;
        run_sample_ns_ = run_ns;
        uint64_t node = 0;
        for (uint64_t i = 0; i < count; ++i) {
          node += uint64_t(UnZigZag(numbers_[2 * i]));
          r.node = node;
          r.weight = numbers_[2 * i + 1];
          visitor_.onSample(r);
        }
        return 1;
      }
      case RecordKind::kMark: {
        MarkRecord r;
        if (!t(in, &r.time) || !in.varint(&r.tid) || !in.varint(&r.label)) return -1;
        visitor_.onMark(r);
        return 1;
      }
      case RecordKind::kState: {
        StateRecord r;
        uint64_t source;
        if (!t(in, &r.time) || !in.varint(&r.tid) || !in.varint(&r.on) || !in.varint(&source) ||
            !within(source, kMaxEnum, "source"))
          return -1;
        r.source = static_cast<StateSource>(source);
        visitor_.onState(r);
        return 1;
      }
      case RecordKind::kStats: {
        StatsRecord r;
        if (!t(in, &r.time) || !in.varint(&r.key) || !in.varint(&r.value)) return -1;
        visitor_.onStats(r);
        return 1;
      }
      case RecordKind::kDisabled: {
        DisabledRecord r;
        if (!t(in, &r.time) || !in.varint(&r.reason)) return -1;
        visitor_.onDisabled(r);
        return 1;
      }
      case RecordKind::kEnd: {
        EndRecord r;
        uint64_t how;
        if (!t(in, &r.time) || !in.varint(&how) || !in.varint(&r.code) ||
            !within(how, kMaxEnum, "how"))
          return -1;
        r.how = static_cast<EndHow>(how);
        visitor_.onEnd(r);
        return 1;
      }
      case RecordKind::kTraceFunction: {
        TraceFunctionRecord r;
        if (!in.varint(&r.id) || !in.varint(&r.address)) return -1;
        if (!in.atEnd() && (!in.varint(&r.seen) || !within(r.seen, kMaxTime, "seen")))
          return -1;  // optional
        visitor_.onTraceFunction(r);
        return 1;
      }
      case RecordKind::kCallCounts: {
        CallCountsRecord r;
        if (!t(in, &r.time) || !in.varint(&r.tid) || !in.varint(&r.max_depth) ||
            !in.varint(&r.count))
          return -1;
        if (r.count > in.remaining() / 3 || !within(r.max_depth, kMaxDepth, "max_depth"))
          return -1;  // each triple takes at least 3 bytes
        numbers_.resize(r.count * 3);
        for (auto& v : numbers_)
          if (!in.varint(&v)) return -1;
        for (uint64_t i = 0; i < r.count; ++i)
          if (!within(numbers_[3 * i + 2], kMaxCount, "calls")) return -1;
        r.triples = numbers_.data();
        visitor_.onCallCounts(r);
        return 1;
      }
      case RecordKind::kCallSiteCounts: {
        CallSiteCountsRecord r;
        if (!t(in, &r.time) || !in.varint(&r.tid) || !in.varint(&r.count)) return -1;
        if (r.count > in.remaining() / 4) return -1;  // each quad takes at least 4 bytes
        numbers_.resize(r.count * 4);
        for (auto& v : numbers_)
          if (!in.varint(&v)) return -1;
        for (uint64_t i = 0; i < r.count; ++i)
          if (!within(numbers_[4 * i + 3], kMaxCount, "calls")) return -1;
        r.quads = numbers_.data();
        visitor_.onCallSiteCounts(r);
        return 1;
      }
      case RecordKind::kTraceEvents:
      case RecordKind::kTraceEventsShort: {
        TraceEventsRecord r;
        if (!in.varint(&r.tid) || !in.varint(&r.base_tick) || !in.varint(&r.events) ||
            !in.varint(&r.packed_size) || !in.bytes(r.packed_size, &r.packed) ||
            !within(r.events, r.packed_size, "events (each takes a byte or more)"))
          return -1;
        r.short_code = static_cast<RecordKind>(kind) == RecordKind::kTraceEventsShort;
        visitor_.onTraceEvents(r);
        return 1;
      }
      case RecordKind::kAlloc:
        return allocRecord(body, body + length);
      case RecordKind::kFree:
        return freeRecord(body, body + length);
      case RecordKind::kLineCounts: {
        LineCountsRecord r;
        if (!text(in, &r.file) || !text(in, &r.module) || !in.varint(&r.count)) return -1;
        if (r.count > in.remaining() / 2) return -1;  // each pair takes at least 2 bytes
        numbers_.resize(r.count * 2);
        uint64_t line = 0;
        for (uint64_t i = 0; i < r.count; ++i) {
          int64_t delta;
          if (!in.svarint(&delta) || !in.varint(&numbers_[2 * i + 1])) return -1;
          line += static_cast<uint64_t>(delta);
          if (!within(line, kMaxLine, "line") ||
              !within(numbers_[2 * i + 1], kMaxCount, "executions"))
            return -1;
          numbers_[2 * i] = line;
        }
        r.pairs = numbers_.data();
        visitor_.onLineCounts(r);
        return 1;
      }
      case RecordKind::kFunctionCount: {
        FunctionCountRecord r;
        if (!text(in, &r.file) || !text(in, &r.name) || !in.varint(&r.start_line) ||
            !in.varint(&r.end_line) || !in.varint(&r.executions) ||
            !within(r.start_line, kMaxLine, "start_line") ||
            !within(r.end_line, kMaxLine, "end_line") ||
            !within(r.executions, kMaxCount, "executions"))
          return -1;
        visitor_.onFunctionCount(r);
        return 1;
      }
      case RecordKind::kLineInstructions: {
        LineInstructionsRecord r;
        if (!text(in, &r.file) || !text(in, &r.module) || !text(in, &r.function) ||
            !in.varint(&r.count))
          return -1;
        if (r.count > in.remaining() / 3) return -1;  // each row takes at least 3 bytes
        numbers_.resize(r.count * 4);
        uint64_t line = 0;
        for (uint64_t i = 0; i < r.count; ++i) {
          int64_t delta;
          uint64_t* row = &numbers_[4 * i];
          if (!in.svarint(&delta) || !in.varint(&row[1]) || !in.varint(&row[2])) return -1;
          line += static_cast<uint64_t>(delta);
          row[0] = line;
          row[3] = row[2] & 1;
          row[2] >>= 1;
          if (!within(line, kMaxLine, "line") || !within(row[1], kMaxCount, "executed") ||
              !within(row[2], kMaxCount, "uncounted"))
            return -1;
        }
        r.rows = numbers_.data();
        visitor_.onLineInstructions(r);
        return 1;
      }
      case RecordKind::kFunctionInstructions: {
        FunctionInstructionsRecord r;
        uint64_t uncounted = 0;
        if (!text(in, &r.file) || !text(in, &r.name) || !text(in, &r.module) ||
            !in.varint(&r.executed) || !in.varint(&uncounted))
          return -1;
        r.unbounded = uncounted & 1;
        r.uncounted = uncounted >> 1;
        if (!within(r.executed, kMaxCount, "executed") ||
            !within(r.uncounted, kMaxCount, "uncounted"))
          return -1;
        visitor_.onFunctionInstructions(r);
        return 1;
      }
      case RecordKind::kNote: {
        NoteRecord r;
        if (!t(in, &r.time) || !text(in, &r.text)) return -1;
        visitor_.onNote(r);
        return 1;
      }
      case RecordKind::kFrame: {
        FrameRecord r;
        if (!in.varint(&r.id) || !text(in, &r.name) || !text(in, &r.file) || !in.varint(&r.line) ||
            !text(in, &r.def_file) || !in.varint(&r.def_line) || !text(in, &r.module) ||
            !in.varint(&r.flags) || r.id == 0 || !within(r.line, kMaxLine, "line") ||
            !within(r.def_line, kMaxLine, "def_line"))
          return -1;
        visitor_.onFrame(r);
        return 1;
      }
      case RecordKind::kFrames: {
        uint64_t string_count, count;
        if (!in.varint(&string_count) || string_count > in.remaining()) return -1;
        frame_texts_.resize(string_count);
        for (std::string_view& s : frame_texts_)
          if (!text(in, &s)) return -1;
        if (!in.varint(&count) || count > in.remaining() / 8) return -1;  // 8 bytes or more each
        // Whole before delivered: a malformed record delivers nothing.
        frames_.resize(count);
        uint64_t id = 0;
        for (FrameRecord& f : frames_) {
          int64_t delta;
          uint64_t name, file, def_file, module;
          if (!in.svarint(&delta) || !in.varint(&name) || !in.varint(&file) ||
              !in.varint(&f.line) || !in.varint(&def_file) || !in.varint(&f.def_line) ||
              !in.varint(&module) || !in.varint(&f.flags))
            return -1;
          id += uint64_t(delta);
          if (id == 0 || name >= string_count || file >= string_count || def_file >= string_count ||
              module >= string_count || !within(f.line, kMaxLine, "line") ||
              !within(f.def_line, kMaxLine, "def_line"))
            return -1;
          f.id = id;
          f.name = frame_texts_[name];
          f.file = frame_texts_[file];
          f.def_file = frame_texts_[def_file];
          f.module = frame_texts_[module];
        }
        for (const FrameRecord& f : frames_) visitor_.onFrame(f);
        return 1;
      }
      case RecordKind::kSource: {
        SourceRecord r;
        if (!text(in, &r.file) || !text(in, &r.text)) return -1;
        visitor_.onSource(r);
        return 1;
      }
      case RecordKind::kWatch: {
        WatchRecord r;
        uint64_t type;
        if (!t(in, &r.time) || !in.varint(&r.id) || !text(in, &r.name) || !in.varint(&r.address) ||
            !in.varint(&r.size) || !in.varint(&type) || !in.varint(&r.flags) ||
            !in.varint(&r.enumerator_count) || r.id == 0 || type > kMaxWatchType ||
            (r.size != 1 && r.size != 2 && r.size != 4 && r.size != 8))
          return -1;
        r.type = static_cast<WatchType>(type);
        if (r.enumerator_count > in.remaining() / 2) return -1;  // each takes at least 2 bytes
        enumerators_.resize(r.enumerator_count);
        for (WatchEnumerator& e : enumerators_)
          if (!in.svarint(&e.value) || !text(in, &e.name)) return -1;
        r.enumerators = enumerators_.data();
        visitor_.onWatch(r);
        return 1;
      }
      case RecordKind::kWatchHits: {
        WatchHitsRecord r;
        if (!t(in, &r.time) || !in.varint(&r.tid) || !in.varint(&r.hit_count)) return -1;
        if (r.hit_count > in.remaining() / 4) return -1;  // each hit takes at least 4 bytes
        hits_.resize(r.hit_count);
        uint64_t time = r.time;
        for (WatchHit& hit : hits_) {
          int64_t delta;
          if (!in.varint(&hit.watch) || !in.svarint(&delta) || !in.varint(&hit.value) ||
              !in.varint(&hit.ip))
            return -1;
          time += static_cast<uint64_t>(delta);
          hit.time = time;
          if (!within(time, kMaxTime, "time")) return -1;
        }
        if (!in.varint(&r.total_count) || r.total_count > in.remaining() / 3) return -1;
        totals_.resize(r.total_count);
        for (WatchTotal& total : totals_)
          if (!in.varint(&total.watch) || !in.varint(&total.writes) || !in.varint(&total.reads) ||
              !within(total.writes, kMaxCount, "writes") ||
              !within(total.reads, kMaxCount, "reads"))
            return -1;
        r.hits = hits_.data();
        r.totals = totals_.data();
        visitor_.onWatchHits(r);
        return 1;
      }
      case RecordKind::kSize: {
        SizeRecord r;
        if (!t(in, &r.time) || !in.varint(&r.tid) || !in.varint(&r.function) ||
            !in.varint(&r.entry_tick) || !in.varint(&r.n))
          return -1;
        visitor_.onSize(r);
        return 1;
      }
      case RecordKind::kTexCommands: {
        TexCommandsRecord r;
        if (!t(in, &r.time) || !in.varint(&r.count)) return -1;
        if (r.count > in.remaining() / 4) return -1;  // each row takes at least 4 bytes
        numbers_.resize(r.count * 3);
        names_.resize(r.count);
        for (uint64_t i = 0; i < r.count; ++i)
          if (!in.varint(&numbers_[3 * i]) || !text(in, &names_[i]) ||
              !in.varint(&numbers_[3 * i + 1]) || !in.varint(&numbers_[3 * i + 2]) ||
              !within(numbers_[3 * i + 1], kMaxCount, "slots") ||
              !within(numbers_[3 * i + 2], kMaxCount, "cost"))
            return -1;
        r.names = names_.data();
        r.rows = numbers_.data();
        visitor_.onTexCommands(r);
        return 1;
      }
    }
    return 0;
  }

  RecordVisitor& visitor_;
  ReadStats& stats_;
  std::string_view name_;
  uint64_t time_ = 0;
  std::string why_;  // why the record being read is malformed, when a bound says so
  // What the bounds of a run need: the period samples are timed with, and running sums.
  uint64_t period_ns_ = kAssumedPeriodNs;
  uint64_t run_sample_ns_ = 0, run_cpu_ns_ = 0, run_alloc_bytes_ = 0;
  std::vector<uint64_t> argv_;
  std::vector<uint64_t> numbers_;  // scratch for records with arrays
  std::vector<WatchEnumerator> enumerators_;
  std::vector<std::string_view> frame_texts_;  // scratch for FRAMES
  std::vector<FrameRecord> frames_;
  std::vector<WatchHit> hits_;
  std::vector<WatchTotal> totals_;
  std::vector<std::string_view> names_;
};

}  // namespace

std::string ReadStats::summary() const {
  if (!damaged()) return {};
  std::string s;
  auto add = [&](uint64_t n, const char* what) {
    if (!n) return;
    if (!s.empty()) s += ", ";
    s += std::to_string(n) + what;
  };
  add(damaged_chunks, " damaged chunk(s) dropped");
  add(bytes_skipped, " byte(s) skipped");
  add(truncated_bytes, " byte(s) of a truncated tail dropped");
  add(malformed_records, " malformed record(s) skipped");
  return s;
}

void ReadStats::add(const ReadStats& run) {
  file_bytes += run.file_bytes;
  chunks += run.chunks;
  damaged_chunks += run.damaged_chunks;
  bytes_skipped += run.bytes_skipped;
  truncated_bytes += run.truncated_bytes;
  records += run.records;
  unknown_records += run.unknown_records;
  malformed_records += run.malformed_records;
  problems.insert(problems.end(), run.problems.begin(), run.problems.end());
}

namespace {

// Whether a whole profile's header, checksum included, begins at `p`: the next run of a file
// of several.
bool RunHeaderAt(const uint8_t* p, size_t left) {
  return left >= kFileHeaderSize && std::memcmp(p, kMagic, sizeof kMagic) == 0 &&
         Crc32c(p, 28) == Le32(p + 28);
}

}  // namespace

namespace {

// Told, after each chunk, how many bytes from the start are done with: the reader never looks
// back. nullptr when the bytes are the caller's.
using DoneWith = void (*)(void* context, size_t bytes);

Status ReadRun(const uint8_t* data, size_t size, std::string_view name, RecordVisitor& visitor,
               ReadStats* stats_out, DoneWith done_with, void* context) {
  ReadStats local;
  ReadStats& stats = stats_out ? *stats_out : local;
  stats = ReadStats{};
  stats.file_bytes = size;
  std::string who(name);

  if (size < sizeof kMagic || std::memcmp(data, kMagic, sizeof kMagic) != 0)
    return Status::Error(who + ": not a hotline profile (wrong magic)");
  if (size < kFileHeaderSize)
    return Status::Error(who + ": truncated profile header (" + std::to_string(size) + " bytes)");
  if (Crc32c(data, 28) != Le32(data + 28))
    return Status::Error(who + ": damaged profile header (checksum mismatch)");
  stats.version = Le16(data + 8);
  stats.min_reader_version = Le16(data + 10);
  uint32_t header_size = Le32(data + 12);
  stats.features = Le64(data + 16);
  if (stats.min_reader_version > kVersion) {
    return Status::Error(who + ": written by format version " + std::to_string(stats.version) +
                         ", which needs a reader of version " +
                         std::to_string(stats.min_reader_version) +
                         "; this hotline reads version " + std::to_string(kVersion));
  }
  if (header_size < kFileHeaderSize || header_size > size)
    return Status::Error(who + ": damaged profile header (size " + std::to_string(header_size) +
                         ")");

  PayloadDecoder decoder(visitor, stats, name);
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> dctx_owner(dctx, ZSTD_freeDCtx);
  std::vector<uint8_t> raw;

  size_t pos = header_size;
  bool in_damage = false;  // scanning forward after a damaged chunk
  while (pos < size) {
    if (RunHeaderAt(data + pos, size - pos)) {
      stats.next_run = pos;
      break;
    }
    ChunkHeader h;
    bool header_ok = size - pos >= kChunkHeaderSize && ParseChunkHeader(data + pos, &h);
    if (!header_ok) {
      if (size - pos < kChunkHeaderSize && !in_damage &&
          std::memcmp(data + pos, kChunkSync, std::min<size_t>(4, size - pos)) == 0) {
        stats.truncated_bytes += size - pos;  // a header cut short at the end of the file
        break;
      }
      if (!in_damage) {
        ++stats.damaged_chunks;
        decoder.note("damaged chunk header at offset " + std::to_string(pos));
        in_damage = true;
      }
      ++stats.bytes_skipped;
      ++pos;
      continue;
    }
    in_damage = false;
    size_t payload_at = pos + kChunkHeaderSize;
    if (h.stored_len > size - payload_at) {
      stats.truncated_bytes += size - pos;  // the last chunk was cut short
      break;
    }
    const uint8_t* payload = data + payload_at;
    bool ok = Crc32c(payload, h.stored_len) == h.payload_crc;
    const uint8_t* plain = payload;
    size_t plain_size = h.stored_len;
    if (ok && (h.flags & kChunkZstd)) {
      raw.resize(h.raw_len);
      size_t n = ZSTD_decompressDCtx(dctx, raw.data(), raw.size(), payload, h.stored_len);
      ok = !ZSTD_isError(n) && n == h.raw_len;
      plain = raw.data();
      plain_size = h.raw_len;
    } else if (ok && h.raw_len != h.stored_len) {
      ok = false;
    }
    if (!ok) {
      ++stats.damaged_chunks;
      decoder.note("damaged chunk at offset " + std::to_string(pos) + " (checksum or compression)");
      // The header checked, so its length is trustworthy enough to skip the payload.
      stats.bytes_skipped += kChunkHeaderSize + h.stored_len;
      pos = payload_at + h.stored_len;
      continue;
    }
    if (h.type == static_cast<uint16_t>(ChunkType::kRecords)) {
      if (!decoder.decode(plain, plain_size, pos)) ++stats.malformed_records;
    }
    ++stats.chunks;
    pos = payload_at + h.stored_len;
    if (done_with) done_with(context, pos);
  }
  if (stats.next_run) stats.file_bytes = stats.next_run;
  return Status();
}

// A file mapped for reading. The pages of the chunks read are given back as the reading goes:
// a profile read once from start to end then holds a few megabytes of it, not its size.
struct Mapping {
  uint8_t* start;
  size_t run_offset;    // where the run being read begins
  size_t released = 0;  // bytes from start given back

  static constexpr size_t kReleaseBytes = 4u << 20;

  static void DoneWith(void* context, size_t bytes_of_run) {
    auto* m = static_cast<Mapping*>(context);
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_t done = (m->run_offset + bytes_of_run) / page * page;
    if (done < m->released + kReleaseBytes) return;
    madvise(m->start + m->released, done - m->released, MADV_DONTNEED);
    m->released = done;
  }
};

}  // namespace

Status ReadProfileBytes(const uint8_t* data, size_t size, std::string_view name,
                        RecordVisitor& visitor, ReadStats* stats) {
  return ReadRun(data, size, name, visitor, stats, nullptr, nullptr);
}

Status ReadProfileFile(const std::string& path, RecordVisitor& visitor, ReadStats* stats,
                       uint64_t offset) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::Error(path + ": " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::Error(path + ": not a regular file");
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return Status::Error(path + ": empty file, not a hotline profile");
  }
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return Status::Error(path + ": cannot map: " + std::strerror(errno));
  ReadStats local;
  if (!stats) stats = &local;
  Mapping mapping{static_cast<uint8_t*>(map), static_cast<size_t>(offset)};
  Status status = offset < size
                      ? ReadRun(static_cast<const uint8_t*>(map) + offset, size - offset, path,
                                visitor, stats, Mapping::DoneWith, &mapping)
                      : Status::Error(path + ": no run at offset " + std::to_string(offset));
  if (stats->next_run) stats->next_run += offset;
  munmap(map, size);
  return status;
}

}  // namespace hotline::format

// pprof's profile.proto (github.com/google/pprof/blob/main/proto/profile.proto), gzipped, as
// `go tool pprof`, Pyroscope and Parca read it. Time profiles: one sample per (stack, thread)
// with samples/count and cpu|wall/nanoseconds. Heap profiles: one sample per allocation stack
// with alloc_objects, alloc_space, inuse_objects, inuse_space. Inline levels sharing an address
// are the lines of one location (innermost first); modules are mappings with their build-id;
// marks are comments.
#include <fmt/format.h>
#include <zlib.h>

#include <map>
#include <unordered_map>

#include "export/export.h"
#include "export/protobuf.h"

namespace hotline::exporter {
namespace {

// profile.proto's field numbers.
namespace field {
constexpr uint32_t kSampleType = 1, kSample = 2, kMapping = 3, kLocation = 4, kFunction = 5,
                   kStringTable = 6, kTimeNanos = 9, kDurationNanos = 10, kPeriodType = 11,
                   kPeriod = 12, kComment = 13, kDefaultSampleType = 14;
}  // namespace field

struct LocationLine {
  uint64_t function = 0;  // pprof function id
  int64_t line = 0;
};

// Builds the tables of one profile.proto: strings, functions, mappings and locations get ids as
// they are first used.
class PprofBuilder {
 public:
  PprofBuilder() { strings_.emplace_back(); }

  uint64_t string(const std::string& s) {
    auto [it, fresh] = string_ids_.try_emplace(s, strings_.size());
    if (fresh) strings_.push_back(s);
    return it->second;
  }

  void sampleType(const std::string& type, const std::string& unit) {
    ProtoWriter vt;
    vt.varint(1, string(type));
    vt.varint(2, string(unit));
    head_.message(field::kSampleType, vt);
  }

  uint64_t function(const std::string& name, const std::string& file, uint32_t start_line) {
    std::string key = name + '\0' + file + '\0' + std::to_string(start_line);
    auto [it, fresh] = function_ids_.try_emplace(key, function_ids_.size() + 1);
    if (fresh) {
      ProtoWriter f;
      f.varint(1, it->second);
      f.varint(2, string(name));
      f.varint(3, string(name));
      f.varint(4, string(file));
      f.varint(5, start_line);
      tables_.message(field::kFunction, f);
    }
    return it->second;
  }

  // The mapping of module `index`: its id, 0 for pseudo-modules (which map nothing).
  uint64_t mapping(const model::Profile& p, uint32_t index) {
    const model::Module& m = p.modules[index];
    if (m.pseudo != model::PseudoKind::kNone || m.size == 0) return 0;
    auto [it, fresh] = mapping_ids_.try_emplace(index, mapping_ids_.size() + 1);
    if (fresh) {
      ProtoWriter w;
      w.varint(1, it->second);
      w.varint(2, m.start);
      w.varint(3, m.start + m.size);
      w.varint(4, m.file_offset);
      w.varint(5, string(m.path));
      w.varint(6, string(Hex(m.build_id)));
      for (uint32_t has = 7; has <= 10; ++has)
        w.varint(has, 1);  // functions, files, lines, inlines
      tables_.message(field::kMapping, w);
    }
    return it->second;
  }

  // The location of `lines` (innermost first) at `address` in mapping `mapping`.
  uint64_t location(uint64_t address, uint64_t mapping, const std::vector<LocationLine>& lines) {
    std::string key = std::to_string(address) + '@' + std::to_string(mapping);
    for (const LocationLine& l : lines) key += fmt::format(";{}:{}", l.function, l.line);
    auto [it, fresh] = location_ids_.try_emplace(key, location_ids_.size() + 1);
    if (fresh) {
      ProtoWriter loc;
      loc.varint(1, it->second);
      loc.varint(2, mapping);
      loc.varint(3, address);
      for (const LocationLine& l : lines) {
        ProtoWriter line;
        line.varint(1, l.function);
        line.varint(2, static_cast<uint64_t>(l.line));
        loc.message(4, line);
      }
      tables_.message(field::kLocation, loc);
    }
    return it->second;
  }

  void sample(const std::vector<uint64_t>& locations, const std::vector<uint64_t>& values,
              const std::vector<std::pair<std::string, std::string>>& labels) {
    ProtoWriter s;
    s.packed(1, locations);
    s.packed(2, values);
    for (const auto& [key, value] : labels) {
      ProtoWriter label;
      label.varint(1, string(key));
      label.varint(2, string(value));
      s.message(3, label);
    }
    samples_.message(field::kSample, s);
  }

  void comment(const std::string& text) { comments_.push_back(string(text)); }

  // The whole message, with `default_type` (one of the sample types) shown by default.
  std::string finish(uint64_t time_ns, uint64_t duration_ns, const std::string& period_type,
                     const std::string& period_unit, uint64_t period,
                     const std::string& default_type) {
    ProtoWriter tail;
    tail.varint(field::kTimeNanos, time_ns);
    tail.varint(field::kDurationNanos, duration_ns);
    ProtoWriter pt;
    pt.varint(1, string(period_type));
    pt.varint(2, string(period_unit));
    tail.message(field::kPeriodType, pt);
    tail.varint(field::kPeriod, period);
    // comment is a repeated int64: written unpacked, which readers accept as well.
    for (uint64_t c : comments_) tail.varint(field::kComment, c);
    tail.varint(field::kDefaultSampleType, string(default_type));
    ProtoWriter strings;
    for (const std::string& s : strings_) strings.string(field::kStringTable, s);
    return head_.data() + samples_.data() + tables_.data() + strings.data() + tail.data();
  }

  static std::string Hex(const std::string& raw) {
    std::string hex;
    for (unsigned char c : raw) hex += fmt::format("{:02x}", c);
    return hex;
  }

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, uint64_t> string_ids_;
  std::unordered_map<std::string, uint64_t> function_ids_;
  std::unordered_map<uint32_t, uint64_t> mapping_ids_;
  std::unordered_map<std::string, uint64_t> location_ids_;
  std::vector<uint64_t> comments_;
  ProtoWriter head_, samples_, tables_;
};

Expected<std::string> Gzip(const std::string& data) {
  z_stream z{};
  // 15 window bits + 16: a gzip header and trailer rather than zlib's.
  if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return Status::Error("zlib: cannot start compressing");
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int result = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (result != Z_STREAM_END) return Status::Error("zlib: compressing failed");
  return out;
}

std::string PprofFileName(const model::Profile& p, model::FileId id) {
  return id.valid() ? p.file(id).path : "";
}

// pprof names a profile after its first mapping: the program's own, when it has one.
void MainMappingFirst(const model::Profile& p, PprofBuilder& b) {
  for (uint32_t i = 0; i < p.modules.size(); ++i)
    if (!p.summary.exe.empty() && p.modules[i].path == p.summary.exe) {
      b.mapping(p, i);
      return;
    }
}

// The locations of one stack, innermost first: frames sharing a non-zero address (the inline
// levels of one instruction) are one location.
std::vector<uint64_t> StackLocations(const model::Profile& p, model::StackId stack,
                                     PprofBuilder& b) {
  std::vector<model::StackFrame> frames;
  p.framesOf(stack, frames);
  std::vector<uint64_t> locations;
  size_t end = frames.size();
  while (end > 0) {
    size_t begin = end - 1;
    uint64_t address = frames[begin].address;
    while (address != 0 && begin > 0 && frames[begin - 1].address == address) --begin;
    std::vector<LocationLine> lines;
    for (size_t i = end; i-- > begin;) {
      const model::Function& f = p.function(frames[i].function);
      uint32_t line = frames[i].line.valid() ? p.line(frames[i].line).line : 0;
      lines.push_back({b.function(f.name, PprofFileName(p, f.file), f.line), line});
    }
    // The outermost level is the real function: its module holds the code.
    const model::Function& outer = p.function(frames[begin].function);
    uint64_t mapping = outer.module.valid() ? b.mapping(p, outer.module.index()) : 0;
    locations.push_back(b.location(address, mapping, lines));
    end = begin;
  }
  return locations;
}

void AddMarks(const model::Profile& p, PprofBuilder& b) {
  if (!p.summary.exe.empty()) b.comment("hotline profile of " + p.summary.exe);
  for (const model::Mark& m : p.marks) {
    double at_ms = m.time >= p.summary.first_time
                       ? static_cast<double>(m.time - p.summary.first_time) / 1e6
                       : 0.0;
    b.comment(fmt::format("mark \"{}\" at {:.3f} ms, thread {}", m.label, at_ms, m.tid));
  }
}

uint64_t Duration(const model::Profile& p) {
  return p.summary.last_time > p.summary.first_time ? p.summary.last_time - p.summary.first_time
                                                    : 0;
}

}  // namespace

Expected<std::string> ExportPprof(const model::Profile& profile) {
  PprofBuilder b;
  std::string time = profile.summary.clock == format::ClockMode::kWall ? "wall" : "cpu";
  b.sampleType("samples", "count");
  b.sampleType(time, "nanoseconds");
  MainMappingFirst(profile, b);
  for (const model::StackTime& st : profile.stack_times) {
    if (st.ns == 0 && st.samples == 0) continue;
    const model::Thread& t = profile.threads[st.thread];
    std::vector<std::pair<std::string, std::string>> labels = {{"thread", std::to_string(t.tid)}};
    if (!t.name.empty()) labels.emplace_back("thread_name", t.name);
    b.sample(StackLocations(profile, st.stack, b), {st.samples, st.ns}, labels);
  }
  AddMarks(profile, b);
  return Gzip(b.finish(profile.summary.start_realtime_ns, Duration(profile), time, "nanoseconds",
                       profile.summary.period_ns, time));
}

Expected<std::string> ExportHeapPprof(const model::Profile& profile,
                                      const model::HeapProfile& heap) {
  PprofBuilder b;
  b.sampleType("alloc_objects", "count");
  b.sampleType("alloc_space", "bytes");
  b.sampleType("inuse_objects", "count");
  b.sampleType("inuse_space", "bytes");
  MainMappingFirst(profile, b);
  auto module_at = [&](uint64_t address) -> uint64_t {
    for (uint32_t i = 0; i < profile.modules.size(); ++i) {
      const model::Module& m = profile.modules[i];
      if (address >= m.start && address - m.start < m.size) return b.mapping(profile, i);
    }
    return 0;
  };
  for (const model::HeapStack& stack : heap.stacks) {
    std::vector<uint64_t> locations;
    // Frames are innermost first; inline levels share their address with the frame after them.
    for (size_t i = 0; i < stack.frames.size();) {
      size_t end = i + 1;
      uint64_t address = stack.frames[i].address;
      while (address != 0 && end < stack.frames.size() && stack.frames[end].address == address)
        ++end;
      std::vector<LocationLine> lines;
      for (size_t k = i; k < end; ++k) {
        const model::HeapFrame& f = stack.frames[k];
        lines.push_back(
            {b.function(f.function, f.decl_file.empty() ? f.file : f.decl_file, f.decl_line),
             f.line});
      }
      locations.push_back(b.location(address, module_at(address), lines));
      i = end;
    }
    b.sample(locations, {stack.calls, stack.bytes, stack.live_calls, stack.live_bytes}, {});
  }
  AddMarks(profile, b);
  return Gzip(b.finish(profile.summary.start_realtime_ns, Duration(profile), "space", "bytes", 1,
                       "inuse_space"));
}

}  // namespace hotline::exporter

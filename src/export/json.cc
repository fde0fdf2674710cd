// hotline's own JSON: the model as it is, ids as indexes into its arrays (docs/export.md,
// docs/export-schema.json). Nothing is computed here: every field is a field of model::Profile
// or model::HeapProfile.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "export/export.h"

namespace hotline::exporter {
namespace {

using nlohmann::json;

const char* PseudoName(model::PseudoKind kind) {
  switch (kind) {
    case model::PseudoKind::kNone:
      return nullptr;
    case model::PseudoKind::kUnknown:
      return "unknown";
    case model::PseudoKind::kKernel:
      return "kernel";
    case model::PseudoKind::kModule:
      return "module";
    case model::PseudoKind::kProfiler:
      return "profiler";
    case model::PseudoKind::kBrokenStack:
      return "broken_stack";
    case model::PseudoKind::kUnsampled:
      return "unsampled";
  }
  return nullptr;
}

json Pseudo(model::PseudoKind kind) {
  const char* name = PseudoName(kind);
  return name ? json(name) : json(nullptr);
}

template <typename IdType>
json IdOrNull(IdType id) {
  return id.valid() ? json(id.index()) : json(nullptr);
}

std::string Hex(const std::string& raw) {
  std::string hex;
  for (unsigned char c : raw) hex += fmt::format("{:02x}", c);
  return hex;
}

json Summary(const model::Summary& s) {
  return {{"exe", s.exe},
          {"argv", s.argv},
          {"total_ns", s.total_ns},
          {"samples", s.samples},
          {"period_ns", s.period_ns},
          {"clock", s.clock == format::ClockMode::kWall ? "wall" : "cpu"},
          {"max_depth", s.max_depth},
          {"broken_samples", s.broken_samples},
          {"truncated_samples", s.truncated_samples},
          {"first_time", s.first_time},
          {"last_time", s.last_time},
          {"exact_line_counts", s.exact_line_counts},
          {"traced", s.traced},
          {"trace_timed", s.trace_timed},
          {"unsampled_ns", s.unsampled_ns}};
}

json Modules(const model::Profile& p) {
  json modules = json::array();
  for (const model::Module& m : p.modules)
    modules.push_back({{"path", m.path},
                       {"pseudo", Pseudo(m.pseudo)},
                       {"build_id", Hex(m.build_id)},
                       {"self_ns", m.self_ns},
                       {"samples", m.samples},
                       {"start", m.start},
                       {"size", m.size},
                       {"file_offset", m.file_offset},
                       {"bias", m.bias}});
  return modules;
}

json Files(const model::Profile& p) {
  json files = json::array();
  for (const model::File& f : p.files)
    files.push_back({{"path", f.path},
                     {"pseudo", Pseudo(f.pseudo)},
                     {"time_ns", f.time_ns},
                     {"count", f.count},
                     {"lines_hit", f.lines_hit}});
  return files;
}

json Lines(const model::Profile& p) {
  json lines = json::array();
  for (const model::Line& l : p.lines)
    lines.push_back({{"file", l.file.index()},
                     {"line", l.line},
                     {"time_ns", l.time_ns},
                     {"inclusive_ns", l.inclusive_ns},
                     {"count", l.count},
                     {"count_exact", l.count_exact},
                     {"samples", l.samples}});
  return lines;
}

json Functions(const model::Profile& p) {
  json functions = json::array();
  for (const model::Function& f : p.functions) {
    json one = {{"name", f.name},
                {"file", IdOrNull(f.file)},
                {"line", f.line},
                {"module", IdOrNull(f.module)},
                {"pseudo", Pseudo(f.pseudo)},
                {"self_ns", f.self_ns},
                {"inclusive_ns", f.inclusive_ns},
                {"calls", f.calls},
                {"calls_exact", f.calls_exact},
                {"samples", f.samples}};
    if (f.timed)
      one["traced"] = {{"inclusive_ns", f.traced_inclusive_ns},
                       {"self_ns", f.traced_self_ns},
                       {"min_ns", f.traced_min_ns},
                       {"max_ns", f.traced_max_ns},
                       {"call_sum_ns", f.traced_call_sum_ns}};
    functions.push_back(std::move(one));
  }
  return functions;
}

json CallGraph(const model::Profile& p) {
  json edges = json::array();
  for (uint32_t caller = 0; caller < p.callees.size(); ++caller)
    for (const model::CallEdge& e : p.callees[caller])
      edges.push_back({{"caller", caller},
                       {"callee", e.child.index()},
                       {"time_ns", e.time_ns},
                       {"loop_ns", e.loop_ns},
                       {"calls", e.calls}});
  return edges;
}

json Threads(const model::Profile& p) {
  json threads = json::array();
  for (const model::Thread& t : p.threads)
    threads.push_back({{"tid", t.tid},
                       {"name", t.name},
                       {"time_ns", t.time_ns},
                       {"unsampled_ns", t.unsampled_ns},
                       {"samples", t.samples},
                       {"cpu_ns", t.cpu_ns ? json(*t.cpu_ns) : json(nullptr)}});
  return threads;
}

json Marks(const model::Profile& p) {
  json marks = json::array();
  for (const model::Mark& m : p.marks)
    marks.push_back({{"time", m.time}, {"tid", m.tid}, {"label", m.label}});
  return marks;
}

json Heap(const model::HeapProfile& h) {
  return {{"peak_bytes", h.peak_bytes},
          {"peak_time_ns", h.peak_time_ns},
          {"total_bytes", h.total_bytes},
          {"alloc_calls", h.alloc_calls},
          {"free_calls", h.free_calls},
          {"temporary_calls", h.temporary_calls},
          {"leaked_bytes", h.leaked_bytes},
          {"leaked_calls", h.leaked_calls},
          {"mmap_calls", h.mmap_calls},
          {"mmap_bytes", h.mmap_bytes},
          {"munmap_calls", h.munmap_calls},
          {"mmap_leaked_bytes", h.mmap_leaked_bytes},
          {"unknown_frees", h.unknown_frees},
          // Sampled mode (--heap-sample): the numbers above are estimates, with these errors.
          {"sample_bytes", h.sample_bytes},
          {"total_bytes_error", h.total_bytes_error},
          {"peak_bytes_error", h.peak_bytes_error}};
}

}  // namespace

Expected<std::string> ExportJson(const model::Profile& profile, const model::HeapProfile* heap) {
  json doc = {{"format", "hotline"},
              {"version", 1},
              {"summary", Summary(profile.summary)},
              {"modules", Modules(profile)},
              {"files", Files(profile)},
              {"functions", Functions(profile)},
              {"lines", Lines(profile)},
              {"call_graph", CallGraph(profile)},
              {"threads", Threads(profile)},
              {"marks", Marks(profile)},
              {"heap", heap ? Heap(*heap) : json(nullptr)}};
  // Names from the debug info may hold invalid UTF-8: replaced, never a failed export.
  return doc.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace hotline::exporter

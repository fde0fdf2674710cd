// `hotline dump [FILE]`: every record of a profile in file order, one line each, then what the
// reader saw (header, chunks, damage). For inspecting files; addresses stay raw.
#include <fmt/core.h>

#include <memory>
#include <string>
#include <unordered_map>

#include "cli/commands.h"
#include "cli/profile_path.h"
#include "format/reader.h"

namespace hotline::cli {
namespace {

struct DumpOptions {
  std::string file;

  void Register(CLI::App& cmd) {
    cmd.add_option("FILE", file, "the profile (default: the newest *.hotline here)");
  }
};

// Prints each record as `KIND field=value ...`; string ids are shown with their text.
class DumpPrinter : public format::RecordVisitor {
 public:
  void onProcess(const format::ProcessRecord& r) override {
    std::string argv;
    for (uint64_t i = 0; i < r.argc; ++i) argv += (i ? " " : "") + str(r.argv[i]);
    fmt::print(
        "PROCESS pid={} ppid={} realtime_ns={} t={} exe={} argv=[{}] clock={} sampler={} "
        "period_ns={} unwinder={} max_depth={} flags={:#x} trace={} tick_ns_q32={}\n",
        r.pid, r.ppid, r.realtime_ns, r.time, str(r.exe), argv, unsigned(r.clock),
        unsigned(r.sampler), r.period_ns, unsigned(r.unwinder), r.max_depth, r.flags,
        unsigned(r.trace), r.trace_tick_ns_q32);
  }
  void onString(const format::StringRecord& r) override {
    strings_[r.id] = std::string(r.text, r.size);
    fmt::print("STRING id={} text=\"{}\"\n", r.id, strings_[r.id]);
  }
  void onModuleLoad(const format::ModuleLoadRecord& r) override {
    std::string build_id;
    for (uint64_t i = 0; i < r.build_id_size; ++i) build_id += fmt::format("{:02x}", r.build_id[i]);
    fmt::print(
        "MODULE_LOAD t={} id={} path={} bias={:#x} start={:#x} size={:#x} file_offset={:#x} "
        "build_id={}\n",
        r.time, r.id, str(r.path), r.bias, r.start, r.size, r.file_offset,
        build_id.empty() ? "-" : build_id);
  }
  void onModuleUnload(const format::ModuleUnloadRecord& r) override {
    fmt::print("MODULE_UNLOAD t={} id={}\n", r.time, r.id);
  }
  void onThreadStart(const format::ThreadStartRecord& r) override {
    fmt::print("THREAD_START t={} tid={} name={} flags={:#x}\n", r.time, r.tid, str(r.name),
               r.flags);
  }
  void onThreadEnd(const format::ThreadEndRecord& r) override {
    fmt::print("THREAD_END t={} tid={} cpu_ns={}\n", r.time, r.tid, r.cpu_ns);
  }
  void onThreadName(const format::ThreadNameRecord& r) override {
    fmt::print("THREAD_NAME t={} tid={} name={}\n", r.time, r.tid, str(r.name));
  }
  void onStackNode(const format::StackNodeRecord& r) override {
    fmt::print("STACK_NODE id={} parent={} address={:#x}\n", r.id, r.parent, r.address);
  }
  void onSample(const format::SampleRecord& r) override {
    fmt::print("SAMPLE t={} tid={} node={} weight={} flags={:#x}\n", r.time, r.tid, r.node,
               r.weight, r.flags);
  }
  void onSize(const format::SizeRecord& r) override {
    fmt::print("SIZE t={} tid={} function={} entry_tick={} n={}\n", r.time, r.tid, r.function,
               r.entry_tick, r.n);
  }
  void onMark(const format::MarkRecord& r) override {
    fmt::print("MARK t={} tid={} label={}\n", r.time, r.tid, str(r.label));
  }
  void onState(const format::StateRecord& r) override {
    fmt::print("STATE t={} tid={} on={} source={}\n", r.time, r.tid, r.on, unsigned(r.source));
  }
  void onStats(const format::StatsRecord& r) override {
    fmt::print("STATS t={} {}={}\n", r.time, str(r.key), r.value);
  }
  void onDisabled(const format::DisabledRecord& r) override {
    fmt::print("DISABLED t={} reason={}\n", r.time, str(r.reason));
  }
  void onEnd(const format::EndRecord& r) override {
    fmt::print("END t={} how={} code={}\n", r.time, unsigned(r.how), r.code);
  }
  void onTraceFunction(const format::TraceFunctionRecord& r) override {
    fmt::print("TRACE_FUNCTION id={} address={:#x}{}\n", r.id, r.address,
               r.seen ? fmt::format(" seen={}", r.seen) : std::string());
  }
  void onCallCounts(const format::CallCountsRecord& r) override {
    fmt::print("CALL_COUNTS t={} tid={} max_depth={} edges={}\n", r.time, r.tid, r.max_depth,
               r.count);
    for (uint64_t i = 0; i < r.count; ++i)
      fmt::print("  {} -> {} calls={}\n", r.triples[3 * i], r.triples[3 * i + 1],
                 r.triples[3 * i + 2]);
  }
  void onCallSiteCounts(const format::CallSiteCountsRecord& r) override {
    fmt::print("CALL_SITE_COUNTS t={} tid={} sites={}\n", r.time, r.tid, r.count);
    for (uint64_t i = 0; i < r.count; ++i) {
      const uint64_t* q = r.quads + 4 * i;
      fmt::print("  {:#x} (hook {:#x}) -> {} calls={}\n", q[0], q[1], q[2], q[3]);
    }
  }
  void onTraceEvents(const format::TraceEventsRecord& r) override {
    fmt::print("{} tid={} base_tick={} events={} bytes={}\n",
               r.short_code ? "TRACE_EVENTS_SHORT" : "TRACE_EVENTS", r.tid, r.base_tick, r.events,
               r.packed_size);
  }
  void onAlloc(const format::AllocRecord& r) override {
    fmt::print("ALLOC t={} tid={} address={:#x} size={} node={} kind={}{}\n", r.time, r.tid,
               r.address, r.size, r.node, unsigned(r.kind),
               r.sample_bytes ? fmt::format(" sample_bytes={}", r.sample_bytes) : "");
  }
  void onFree(const format::FreeRecord& r) override {
    fmt::print("FREE t={} tid={} address={:#x} kind={} size={}\n", r.time, r.tid, r.address,
               unsigned(r.kind), r.size);
  }
  void onLineCounts(const format::LineCountsRecord& r) override {
    fmt::print("LINE_COUNTS file={} module={} lines={}\n", r.file, r.module, r.count);
    for (uint64_t i = 0; i < r.count; ++i)
      fmt::print("  {}: {}\n", r.pairs[2 * i], r.pairs[2 * i + 1]);
  }
  void onFunctionCount(const format::FunctionCountRecord& r) override {
    fmt::print("FUNCTION_COUNT file={} name={} lines={}-{} executions={}\n", r.file, r.name,
               r.start_line, r.end_line, r.executions);
  }
  void onNote(const format::NoteRecord& r) override {
    fmt::print("NOTE t={} text=\"{}\"\n", r.time, r.text);
  }
  void onFrame(const format::FrameRecord& r) override {
    fmt::print(
        "FRAME id={} address={:#x} name=\"{}\" at={}:{} defined={}:{} module={} flags={:#x}\n",
        r.id, format::kNamedFrameTag | r.id, r.name, r.file, r.line, r.def_file, r.def_line,
        r.module, r.flags);
  }
  void onSource(const format::SourceRecord& r) override {
    fmt::print("SOURCE file=\"{}\" bytes={}\n", r.file, r.text.size());
  }
  void onWatch(const format::WatchRecord& r) override {
    static constexpr const char* kTypes[] = {"signed",  "unsigned", "float",
                                             "pointer", "enum",     "bool"};
    fmt::print("WATCH t={} id={} name=\"{}\" address={:#x} size={} type={} flags={:#x}", r.time,
               r.id, r.name, r.address, r.size, kTypes[uint32_t(r.type)], r.flags);
    for (uint64_t i = 0; i < r.enumerator_count; ++i)
      fmt::print("{}{}={}", i == 0 ? " enumerators=" : ",", r.enumerators[i].name,
                 r.enumerators[i].value);
    fmt::print("\n");
  }
  void onWatchHits(const format::WatchHitsRecord& r) override {
    fmt::print("WATCH_HITS t={} tid={} hits={} totals={}\n", r.time, r.tid, r.hit_count,
               r.total_count);
    for (uint64_t i = 0; i < r.hit_count; ++i)
      fmt::print("  watch={} t={} value={:#x} ip={:#x}\n", r.hits[i].watch, r.hits[i].time,
                 r.hits[i].value, r.hits[i].ip);
    for (uint64_t i = 0; i < r.total_count; ++i)
      fmt::print("  total watch={} writes={} reads={}\n", r.totals[i].watch, r.totals[i].writes,
                 r.totals[i].reads);
  }

 private:
  std::string str(uint64_t id) const {
    if (id == 0) return "-";
    auto it = strings_.find(id);
    return it == strings_.end() ? fmt::format("#{}?", id) : fmt::format("\"{}\"", it->second);
  }
  std::unordered_map<uint64_t, std::string> strings_;
};

int RunDump(const DumpOptions& o) {
  Expected<std::string> path = ProfileArgument(o.file);
  if (!path.ok()) {
    fmt::print(stderr, "hotline: dump: {}\n", path.status().message());
    return 1;
  }
  DumpPrinter printer;
  format::ReadStats stats;
  Status status = format::ReadProfileFile(*path, printer, &stats);
  if (!status.ok()) {
    fmt::print(stderr, "hotline: {}\n", status.message());
    return 1;
  }
  fmt::print("# {}: format version {} (readable by {}+), features {:#x}, {} bytes\n", *path,
             stats.version, stats.min_reader_version, stats.features, stats.file_bytes);
  fmt::print("# {} chunks, {} records ({} of unknown kinds)\n", stats.chunks, stats.records,
             stats.unknown_records);
  if (stats.damaged()) {
    fmt::print("# damage: {}\n", stats.summary());
    for (const std::string& problem : stats.problems) fmt::print("#   {}\n", problem);
  }
  return 0;
}

}  // namespace

void RegisterDumpCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<DumpOptions>();
  CLI::App* cmd = app.add_subcommand("dump", "print every raw record of a profile");
  options->Register(*cmd);
  cmd->callback([options, exit_code] { *exit_code = RunDump(*options); });
}

}  // namespace hotline::cli

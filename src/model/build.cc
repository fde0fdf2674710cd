// Building a run's Profile: each sample aggregated as it comes (its stack, line, function,
// module and thread), then the tables completed (exact counts from traces and gcov, inclusive
// line times, order, summary, warnings); and the entry points that read a file or a RawProfile.
#include "model/build.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <span>

#include "format/schema.h"
#include "model/merge.h"
#include "model/order.h"
#include "model/profile_builder.h"
#include "model/trace.h"

namespace hotline::model {

ProfileBuilder::ThreadCursor& ProfileBuilder::thread(uint64_t tid) {
  auto [it, inserted] = threads_.try_emplace(tid);
  if (inserted) {
    it->second.index = static_cast<uint32_t>(profile_.threads.size());
    it->second.path.emplace(profile_.stack_frames);
    Thread t;
    t.tid = tid;
    profile_.threads.push_back(std::move(t));
  }
  return it->second;
}

uint64_t ProfileBuilder::period(const format::RawProfile& raw) {
  // The reader bounds each sample's time by the same rule (format::kMaxSampleNs).
  if (raw.process && raw.process->period_ns > 0) {
    profile_.summary.period_ns = raw.process->period_ns;
  } else {
    if (!period_assumed_)
      profile_.warnings.push_back(
          "the process record (which holds the sampling period) is missing: assuming 1 ms per "
          "sample");
    period_assumed_ = true;
    profile_.summary.period_ns = kAssumedPeriodNs;
  }
  return profile_.summary.period_ns;
}

bool ProfileBuilder::switchedOff(const format::RawProfile& raw, uint64_t time) {
  if (!raw.process || raw.process->sampler != format::Sampler::kKernelRecorder) return false;
  bool on_at_start = !(raw.process->flags & format::kStartedPaused);
  if (raw.states.empty()) return !on_at_start;
  if (switches_from_ != raw.states.size()) {
    switches_.clear();
    for (const format::StateRecord& st : raw.states) switches_.emplace_back(st.time, st.on != 0);
    std::stable_sort(switches_.begin(), switches_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    switches_from_ = raw.states.size();
  }
  auto after = std::upper_bound(switches_.begin(), switches_.end(), time,
                                [](uint64_t t, const auto& s) { return t < s.first; });
  return after == switches_.begin() ? !on_at_start : !std::prev(after)->second;
}

void ProfileBuilder::addSample(const format::RawProfile& raw, const format::SampleRecord& sample) {
  if (options_.thread && sample.tid != *options_.thread) return;
  if (switchedOff(raw, sample.time)) {
    ++profile_.summary.samples_switched_off;
    return;
  }
  uint64_t weight = std::max<uint64_t>(sample.weight, 1);
  uint64_t ns;
  if (__builtin_mul_overflow(weight, period(raw), &ns) || ns > format::kMaxSampleNs ||
      profile_.summary.sampled_ns + ns > format::kMaxRunSampleNs) {
    ++samples_beyond_bounds_;
    return;
  }
  SampleStack frames = stack(raw, sample);  // a copy: the caches may grow below
  ThreadCursor& cursor = thread(sample.tid);
  size_t same = cursor.path->moveTo(frames.leaf);
  std::span<const FunctionId> functions = cursor.path->functions();
  StackChange change = graph_.onSample(sample.tid, functions, ns, same);

  Line& line = profile_.lines[frames.line.index()];
  line.time_ns += ns;
  ++line.samples;
  if (cursor.last_line != frames.line) {
    ++line.count;
    cursor.last_line = frames.line;
  }
  addStackTime(frames.stack, cursor.index, ns, 1);
  FunctionId leaf = functions.back();
  ++profile_.functions[leaf.index()].samples;
  Module& mod = profile_.modules[frames.module.index()];
  mod.self_ns += ns;
  ++mod.samples;
  Thread& thread = profile_.threads[cursor.index];
  thread.time_ns += ns;
  ++thread.samples;

  Summary& summary = profile_.summary;
  if (summary.samples == 0 || sample.time < summary.first_time) summary.first_time = sample.time;
  summary.last_time = std::max(summary.last_time, sample.time);
  ++summary.samples;
  summary.weighted_samples += weight;
  if (sample.flags & format::kSampleTruncated) ++summary.truncated_samples;
  if (sample.flags & format::kSampleBroken) ++summary.broken_samples;
  summary.sampled_ns += ns;
  PseudoKind leaf_kind = profile_.functions[leaf.index()].pseudo;
  if (leaf_kind == PseudoKind::kProfiler) ++summary.profiler_samples;
  if (leaf_kind == PseudoKind::kUnknown) ++summary.unknown_samples;

  if (options_.keep_samples) {
    Sample kept;
    kept.tid = sample.tid;
    kept.time = sample.time;
    kept.ns = ns;
    kept.leaf = leaf;
    kept.line = frames.line;
    kept.stack = frames.stack;
    kept.depth = static_cast<uint32_t>(functions.size());
    kept.flags = static_cast<uint32_t>(sample.flags);
    kept.popped = change.popped;
    kept.pushed.assign(functions.begin() + change.common, functions.end());
    if (auto node = raw.stack_nodes.find(sample.node); node != raw.stack_nodes.end()) {
      kept.address = node->second.address;
      if (const format::RawModule* m = raw.moduleAt(kept.address, sample.time))
        kept.module_address = kept.address - m->bias;
    }
    profile_.samples.push_back(std::move(kept));
  }
}

Expected<Profile> ProfileBuilder::finish(const format::RawProfile& raw) {
  constexpr size_t kMaxIds = std::numeric_limits<uint32_t>::max() - 1;
  if (profile_.functions.size() > kMaxIds || profile_.lines.size() > kMaxIds ||
      arena_.size() > kMaxIds || profile_.stack_frames.size() > kMaxIds)
    return Status::Error("the profile is too large: more than 2^32 functions, lines or frames");

  accountUnsampled(raw);
  profile_.summary.watched = !raw.watches.empty();
  // Every module the program mapped, sampled or not: exports map addresses through them.
  for (const format::RawModule& m : raw.modules)
    if (!IsRuntimeModule(m.path)) module(m);
  graph_.finish();
  Profile& p = profile_;
  const auto& totals = graph_.functions();
  for (size_t i = 0; i < totals.size() && i < p.functions.size(); ++i) {
    p.functions[i].self_ns = totals[i].self_ns;
    p.functions[i].inclusive_ns = totals[i].inclusive_ns;
    p.functions[i].calls = totals[i].calls;
  }
  p.callees.assign(p.functions.size(), {});
  for (const EdgeTotals& e : graph_.edges())
    p.callees[e.parent.index()].push_back(CallEdge{e.child, e.time_ns, e.loop_ns, e.calls});
  // Exact calls (and, timed, exact times) from tracing replace the estimates.
  ApplyTrace(
      raw,
      [&](uint64_t address, uint64_t time) {
        const Frames& frames = expand(raw, address, false, time);
        return frames.count ? arena_[frames.offset] : FunctionId();
      },
      [&](uint64_t return_address, uint64_t time) {
        const Frames& frames = expand(raw, return_address, true, time);
        return std::vector<FunctionId>(arena_.begin() + frames.offset,
                                       arena_.begin() + frames.offset + frames.count);
      },
      p, options_.thread, options_.keep_calls);
  p.callees.resize(p.functions.size());
  // gcov's exact counts (record appended them for --coverage builds) replace the estimates.
  for (const format::RawLineCounts& counts : raw.line_counts) {
    FileId f = file(counts.file, PseudoKind::kNone);
    for (const auto& [number, executions] : counts.lines) {
      Line& l = p.lines[line(f, static_cast<uint32_t>(number)).index()];
      l.count = executions;
      l.count_exact = true;
    }
    p.summary.exact_line_counts = true;
  }
  for (auto [line_id, fn] : fileless_lines_) {
    const Function& called = p.functions[fn.index()];
    if (!called.calls_exact) continue;
    Line& l = p.lines[line_id.index()];
    l.count = called.calls;
    l.count_exact = true;
  }
  // gcov's function counts are exact calls, and its ranges let a function's lines be summed
  // (complexity's lines/run). A function no sample or trace saw is added, so the listing can
  // show it (with no time); a traced function keeps the trace's calls, which are the same.
  for (const format::RawFunctionCount& f : raw.function_counts) {
    ModuleId mod;
    for (const format::RawModule& m : raw.modules)
      if (!mod.valid() && m.path == f.file) mod = module(m);
    if (!mod.valid()) {
      for (const format::RawLineCounts& counts : raw.line_counts)
        for (const format::RawModule& m : raw.modules)
          if (!mod.valid() && counts.file == f.file && m.path == counts.module) mod = module(m);
    }
    if (!mod.valid()) mod = pseudoModule(PseudoKind::kModule, "[coverage]");
    FunctionId id = function(f.name, f.file, static_cast<uint32_t>(f.start_line), mod);
    Function& fn = p.functions[id.index()];
    fn.end_line = static_cast<uint32_t>(f.end_line);
    if (p.summary.traced && fn.calls_exact) continue;
    fn.calls = f.executions;
    fn.calls_exact = true;
  }
  p.callees.resize(p.functions.size());
  addLineTimes();
  PutInOrder(p);

  for (const Line& l : p.lines) {
    File& f = p.files[l.file.index()];
    f.time_ns += l.time_ns;
    f.count += l.count;
    if (l.samples) ++f.lines_hit;
  }

  // Thread names and CPU times from the thread records; threads without samples are listed
  // too (with no time), unless the profile is restricted to one thread.
  for (const format::RawThread& t : raw.threads) {
    if (options_.thread && t.tid != *options_.thread) continue;
    Thread& thread = p.threads[this->thread(t.tid).index];
    if (!t.name.empty()) thread.name = t.name;
    if (t.cpu_ns) thread.cpu_ns = t.cpu_ns;
  }
  p.only_thread = options_.thread;

  Summary& s = p.summary;
  s.total_ns = graph_.total_ns();
  s.max_depth = graph_.max_depth();
  for (const File& f : p.files) s.files += f.time_ns > 0 ? 1 : 0;
  for (const Function& f : p.functions) s.functions += f.self_ns > 0 || f.inclusive_ns > 0 || f.calls > 0 ? 1 : 0;
  if (raw.process) {
    s.start_time = raw.process->time;
    s.start_realtime_ns = raw.process->realtime_ns;
    s.clock = raw.process->clock;
    s.sampler = raw.process->sampler;
    s.exe = raw.process->exe;
    s.pid = raw.process->pid;
    s.argv = raw.process->argv;
    if (s.period_ns == 0) s.period_ns = raw.process->period_ns;
  }
  for (const format::SizeRecord& r : raw.sizes)
    if (r.function == 0) s.run_size = r.n;
  for (const format::RawMark& m : raw.marks)
    if (!options_.thread || m.tid == *options_.thread)
      p.marks.push_back(Mark{m.time, m.tid, m.label});
  for (const format::StateRecord& st : raw.states)
    if (!options_.thread || st.tid == *options_.thread)
      p.states.push_back(
          StateChange{st.time, st.tid, st.on != 0, static_cast<uint32_t>(st.source)});
  s.end = raw.end;
  p.runtime_stats = raw.stats;
  p.disabled_reasons = raw.disabled_reasons;
  p.notes = raw.notes;
  p.sources = raw.sources;
  for (const format::RawTexCommand& c : raw.tex_commands)
    p.tex_commands.push_back(TexCommand{c.code, c.name, c.slots, c.cost});
  SortTexCommands(p.tex_commands);
  for (std::string& w : resolver_.warnings()) p.warnings.push_back(std::move(w));
  if (samples_beyond_bounds_)
    p.warnings.push_back(std::to_string(samples_beyond_bounds_) +
                         " samples standing for more time than a run can have were left out");
  if (raw.dangling_references)
    p.warnings.push_back(std::to_string(raw.dangling_references) +
                         " references to records that were lost are shown as [unknown]");
  // Stacks cut short are shown, never hidden: above 1% of the samples, said up front.
  auto share = [&](uint64_t n) { return s.samples ? 100.0 * double(n) / double(s.samples) : 0.0; };
  auto warn_above_one_percent = [&](uint64_t n, const char* stacks) {
    if (share(n) <= 1) return;
    char line[256];
    std::snprintf(line, sizeof line, "%.1f%% of the samples have stacks %s", share(n), stacks);
    p.warnings.push_back(line);
  };
  warn_above_one_percent(s.truncated_samples,
                         "deeper than was recorded (the stack copy, or --max-depth): their outer "
                         "frames are under [truncated]");
  warn_above_one_percent(s.broken_samples,
                         "that stop at a frame without unwind information: their callers are "
                         "under [broken stack]");
  return std::move(profile_);
}

Expected<Profile> BuildProfile(const format::RawProfile& raw, AddressResolver& resolver,
                               const BuildOptions& options) {
  ProfileBuilder builder(resolver, options);
  for (const format::SampleRecord& sample : raw.samples) builder.addSample(raw, sample);
  return builder.finish(raw);
}

class ProfileStream::Builder : public ProfileBuilder {
 public:
  using ProfileBuilder::ProfileBuilder;
};

ProfileStream::ProfileStream(AddressResolver& resolver, std::optional<BuildOptions> options)
    : format::RawProfile(false),
      builder_(options ? std::make_unique<Builder>(resolver, *options) : nullptr) {}

ProfileStream::~ProfileStream() = default;

void ProfileStream::onSample(const format::SampleRecord& r) {
  if (builder_) builder_->addSample(*this, r);
}

Expected<Profile> ProfileStream::finishProfile() { return builder_->finish(*this); }

Expected<std::vector<Profile>> LoadRuns(const std::string& path, AddressResolver& resolver,
                                        const BuildOptions& options, format::ReadStats* stats) {
  std::vector<Profile> runs;
  format::ReadStats all;
  for (uint64_t offset = 0;;) {
    ProfileStream raw(resolver, options);
    format::ReadStats run;
    Status status = format::ReadProfileFile(path, raw, &run, offset);
    if (!status.ok()) return status;
    Expected<Profile> profile = raw.finishProfile();
    if (!profile) return profile.status();
    runs.push_back(std::move(*profile));
    if (offset == 0) {
      all = run;
    } else {
      all.add(run);
    }
    offset = run.next_run;
    if (offset == 0) break;
  }
  all.next_run = 0;
  if (stats) *stats = all;
  return runs;
}

Expected<Profile> LoadProfile(const std::string& path, AddressResolver& resolver,
                              const BuildOptions& options, format::ReadStats* stats) {
  // A file of several runs (hotline merge): each run built on its own, then added up.
  Expected<std::vector<Profile>> runs = LoadRuns(path, resolver, options, stats);
  if (!runs) return runs.status();
  if (runs->size() == 1) return std::move(runs->front());
  std::vector<const Profile*> pointers;
  for (const Profile& run : *runs) pointers.push_back(&run);
  MergeOptions merge;
  merge.force = true;  // hotline merge asked whether runs of different programs may be one
  return MergeProfiles(pointers, merge);
}

}  // namespace hotline::model

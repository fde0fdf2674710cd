#include "model/merge.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "model/order.h"

namespace hotline::model {
namespace {

class Merger {
 public:
  explicit Merger(const MergeOptions& options) : options_(options) {}

  Status add(const Profile& run) {
    if (Status s = compatible(run); !s.ok()) return s;
    std::vector<ModuleId> modules(run.modules.size());
    for (size_t i = 0; i < run.modules.size(); ++i) modules[i] = module(run.modules[i]);
    std::vector<FileId> files(run.files.size());
    for (size_t i = 0; i < run.files.size(); ++i) files[i] = file(run.files[i]);
    std::vector<LineId> lines(run.lines.size());
    for (size_t i = 0; i < run.lines.size(); ++i) lines[i] = line(run.lines[i], files);
    std::vector<FunctionId> functions(run.functions.size());
    for (size_t i = 0; i < run.functions.size(); ++i)
      functions[i] = function(run, run.functions[i], files, modules);
    addCallEdges(run, functions);
    uint32_t first_thread = static_cast<uint32_t>(p_.threads.size());
    p_.threads.insert(p_.threads.end(), run.threads.begin(), run.threads.end());
    // The run's trie of frames into this one's: a frame is the same as another when its caller,
    // function and line are (the first run's address stands for it), and a stack when its
    // innermost frame is.
    std::vector<FrameId> frames(run.stack_frames.size());
    for (size_t i = 0; i < run.stack_frames.size(); ++i) {
      const StackFrame& f = run.stack_frames[i];
      frames[i] = frame(f.caller.valid() ? frames[f.caller.index()] : FrameId(),
                        functions[f.function.index()], lines[f.line.index()], f.address);
    }
    std::vector<StackId> stacks(run.stacks.size());
    for (size_t i = 0; i < run.stacks.size(); ++i) {
      FrameId leaf = run.stacks[i].leaf;
      stacks[i] = stackOf(leaf.valid() ? frames[leaf.index()] : FrameId());
    }
    for (const FunctionLine& fl : run.function_lines)
      addFunctionLine(functions[fl.function.index()], lines[fl.line.index()], fl);
    for (const StackTime& t : run.stack_times)
      addStackTime(stacks[t.stack.index()], first_thread + t.thread, t);
    for (const Sample& s : run.samples) {
      Sample kept = s;
      kept.leaf = functions[s.leaf.index()];
      kept.line = lines[s.line.index()];
      if (s.stack.valid()) kept.stack = stacks[s.stack.index()];
      for (FunctionId& f : kept.pushed) f = functions[f.index()];
      p_.samples.push_back(std::move(kept));
    }
    for (const TracedCall& c : run.calls) {
      TracedCall kept = c;
      kept.function = functions[c.function.index()];
      p_.calls.push_back(kept);
    }
    for (const SizedCall& c : run.sized_calls)
      p_.sized_calls.push_back(SizedCall{functions[c.function.index()], c.n, c.ns});
    p_.marks.insert(p_.marks.end(), run.marks.begin(), run.marks.end());
    p_.states.insert(p_.states.end(), run.states.begin(), run.states.end());
    for (const auto& [name, value] : run.runtime_stats) {
      auto [it, added] = stat_index_.try_emplace(name, p_.runtime_stats.size());
      if (added) p_.runtime_stats.emplace_back(name, 0);
      p_.runtime_stats[it->second].second += value;
    }
    for (const auto* list : {&run.disabled_reasons, &run.notes, &run.warnings}) {
      auto& into = list == &run.disabled_reasons ? p_.disabled_reasons
                   : list == &run.notes          ? p_.notes
                                                 : p_.warnings;
      for (const std::string& text : *list)
        if (std::find(into.begin(), into.end(), text) == into.end()) into.push_back(text);
    }
    p_.sources.insert(run.sources.begin(), run.sources.end());
    for (const TexCommand& c : run.tex_commands) {
      auto it = std::find_if(p_.tex_commands.begin(), p_.tex_commands.end(),
                             [&](const TexCommand& t) { return t.name == c.name; });
      if (it == p_.tex_commands.end()) {
        p_.tex_commands.push_back(TexCommand{c.code, c.name, 0, 0, {}});
        it = p_.tex_commands.end() - 1;
      }
      it->slots += c.slots;
      it->ns += c.ns;
      it->spread.add(c.ns);
    }
    addSpreads(run, files, lines, functions);
    SortTexCommands(p_.tex_commands);
    addSummary(run);
    ++runs_;
    return Status();
  }

  Profile finish() {
    // A count is exact only when every run counted it: one run's estimate makes the sum one.
    if (!all_lines_exact_)
      for (Line& l : p_.lines) l.count_exact = false;
    if (!all_calls_exact_)
      for (Function& f : p_.functions) f.calls_exact = false;
    // A run without a row had none of its time: the least is 0.
    uint32_t runs = static_cast<uint32_t>(runs_);
    auto absent = [runs](RunSpread& s) {
      if (s.seen < runs) s.min_ns = 0;
    };
    for (File& f : p_.files) absent(f.spread);
    for (Line& l : p_.lines) absent(l.spread);
    for (Function& f : p_.functions) absent(f.spread), absent(f.inclusive_spread);
    for (TexCommand& c : p_.tex_commands) absent(c.spread);
    for (File& f : p_.files) f.time_ns = f.count = f.lines_hit = 0;
    for (const Line& l : p_.lines) {
      File& f = p_.files[l.file.index()];
      f.time_ns += l.time_ns;
      f.count += l.count;
      if (l.samples) ++f.lines_hit;
    }
    Summary& s = p_.summary;
    s.files = s.functions = 0;
    for (const File& f : p_.files) s.files += f.time_ns > 0 ? 1 : 0;
    for (const Function& f : p_.functions) s.functions += f.self_ns > 0 || f.inclusive_ns > 0 || f.calls > 0;
    s.exact_line_counts = all_lines_exact_;
    s.runs = runs;
    PutInOrder(p_);
    return std::move(p_);
  }

 private:
  Status compatible(const Profile& run) {
    if (runs_ == 0) return Status();
    const Summary& first = p_.summary;
    if (run.summary.clock != first.clock)
      return Status::Error(
          "a CPU-time profile and an elapsed-time one (--clock wall) do not add up");
    if (run.summary.exe != first.exe && !options_.force)
      return Status::Error("profiles of different programs (" + first.exe + ", " + run.summary.exe +
                           "); --force merges them anyway");
    return Status();
  }

  ModuleId module(const Module& m) {
    std::string key = m.pseudo != PseudoKind::kNone ? "\1" + m.path : m.path + '\0' + m.build_id;
    auto [it, added] = module_index_.try_emplace(key, ModuleId(p_.modules.size()));
    if (added) {
      Module copy = m;
      copy.self_ns = copy.samples = 0;
      p_.modules.push_back(std::move(copy));
      // The same file seen with another build-id: another build, met by symbol.
      if (m.pseudo == PseudoKind::kNone && !m.build_id.empty()) {
        auto [seen, first] = build_of_path_.try_emplace(m.path, m.build_id);
        if (!first && seen->second != m.build_id)
          warn("runs of different builds of " + m.path + " merged by function, file and line");
      }
    }
    Module& into = p_.modules[it->second.index()];
    into.self_ns += m.self_ns;
    into.samples += m.samples;
    return it->second;
  }

  FileId file(const File& f) {
    auto [it, added] = file_index_.try_emplace(f.path, FileId(p_.files.size()));
    if (added) p_.files.push_back(File{f.path, f.pseudo, 0, 0, 0});
    return it->second;
  }

  LineId line(const Line& l, const std::vector<FileId>& files) {
    FileId file = files[l.file.index()];
    uint64_t key = (uint64_t{file.index()} << 32) | l.line;
    auto [it, added] = line_index_.try_emplace(key, LineId(p_.lines.size()));
    if (added) {
      Line copy;
      copy.file = file;
      copy.line = l.line;
      copy.count_exact = true;
      p_.lines.push_back(copy);
    }
    Line& into = p_.lines[it->second.index()];
    into.time_ns += l.time_ns;
    into.count += l.count;
    into.samples += l.samples;
    into.inclusive_ns += l.inclusive_ns;
    into.count_exact = into.count_exact && l.count_exact;
    return it->second;
  }

  FunctionId function(const Profile& run, const Function& f, const std::vector<FileId>& files,
                      const std::vector<ModuleId>& modules) {
    auto [it, added] =
        function_index_.try_emplace(FunctionKey(run, f), FunctionId(p_.functions.size()));
    if (added) {
      Function copy;
      copy.name = f.name;
      if (f.file.valid()) copy.file = files[f.file.index()];
      copy.line = f.line;
      if (f.module.valid()) copy.module = modules[f.module.index()];
      copy.pseudo = f.pseudo;
      copy.calls_exact = true;
      copy.traced_min_ns = f.traced_min_ns;
      p_.functions.push_back(std::move(copy));
      p_.callees.emplace_back();
    }
    Function& into = p_.functions[it->second.index()];
    into.self_ns += f.self_ns;
    into.inclusive_ns += f.inclusive_ns;
    into.calls += f.calls;
    into.samples += f.samples;
    into.calls_exact = into.calls_exact && f.calls_exact;
    into.end_line = std::max(into.end_line, f.end_line);
    if (f.timed) {
      into.traced_min_ns =
          into.timed ? std::min(into.traced_min_ns, f.traced_min_ns) : f.traced_min_ns;
      into.timed = true;
      into.traced_inclusive_ns += f.traced_inclusive_ns;
      into.traced_self_ns += f.traced_self_ns;
      into.traced_max_ns = std::max(into.traced_max_ns, f.traced_max_ns);
      into.traced_call_sum_ns += f.traced_call_sum_ns;
    }
    return it->second;
  }

  void addCallEdges(const Profile& run, const std::vector<FunctionId>& functions) {
    for (size_t parent = 0; parent < run.callees.size(); ++parent)
      for (const CallEdge& e : run.callees[parent]) {
        FunctionId from = functions[parent], to = functions[e.child.index()];
        uint64_t key = (uint64_t{from.index()} << 32) | to.index();
        auto& edges = p_.callees[from.index()];
        auto [it, added] = edge_index_.try_emplace(key, static_cast<uint32_t>(edges.size()));
        if (added) edges.push_back(CallEdge{to, 0, 0, 0});
        CallEdge& into = edges[it->second];
        into.time_ns += e.time_ns;
        into.loop_ns += e.loop_ns;
        into.calls += e.calls;
      }
  }

  FrameId frame(FrameId caller, FunctionId function, LineId line, uint64_t address) {
    auto [it, added] = frame_index_.try_emplace(
        FrameKey{caller.index(), function.index(), line.index()}, FrameId(p_.stack_frames.size()));
    if (added) {
      uint32_t depth = caller.valid() ? p_.frame(caller).depth + 1 : 1;
      p_.stack_frames.push_back(StackFrame{function, line, address, caller, depth});
    }
    return it->second;
  }

  StackId stackOf(FrameId leaf) {
    auto [it, added] = stack_index_.try_emplace(leaf.index(), StackId(p_.stacks.size()));
    if (added) p_.stacks.push_back(Stack{leaf});
    return it->second;
  }

  void addFunctionLine(FunctionId function, LineId line, const FunctionLine& fl) {
    uint64_t key = (uint64_t{function.index()} << 32) | line.index();
    auto [it, added] =
        function_line_index_.try_emplace(key, static_cast<uint32_t>(p_.function_lines.size()));
    if (added) p_.function_lines.push_back(FunctionLine{function, line, 0, 0});
    p_.function_lines[it->second].self_ns += fl.self_ns;
    p_.function_lines[it->second].inclusive_ns += fl.inclusive_ns;
  }

  void addStackTime(StackId stack, uint32_t thread, const StackTime& t) {
    uint64_t key = (uint64_t{stack.index()} << 32) | thread;
    auto [it, added] =
        stack_time_index_.try_emplace(key, static_cast<uint32_t>(p_.stack_times.size()));
    if (added) p_.stack_times.push_back(StackTime{stack, thread, 0, 0});
    p_.stack_times[it->second].ns += t.ns;
    p_.stack_times[it->second].samples += t.samples;
  }

  // Each row's time in this run, into its spread (rows of one run that meet in one merged row
  // count as one).
  void addSpreads(const Profile& run, const std::vector<FileId>& files,
                  const std::vector<LineId>& lines, const std::vector<FunctionId>& functions) {
    auto fold = [](auto& rows, auto spread_of,
                   const std::vector<std::pair<uint32_t, uint64_t>>& add) {
      std::unordered_map<uint32_t, uint64_t> sum;
      for (auto [row, ns] : add) sum[row] += ns;
      for (auto [row, ns] : sum) spread_of(rows[row]).add(ns);
    };
    std::vector<std::pair<uint32_t, uint64_t>> add;
    for (size_t i = 0; i < run.files.size(); ++i)
      add.emplace_back(files[i].index(), run.files[i].time_ns);
    fold(
        p_.files, [](File& f) -> RunSpread& { return f.spread; }, add);
    add.clear();
    for (size_t i = 0; i < run.lines.size(); ++i)
      add.emplace_back(lines[i].index(), run.lines[i].time_ns);
    fold(
        p_.lines, [](Line& l) -> RunSpread& { return l.spread; }, add);
    add.clear();
    for (size_t i = 0; i < run.functions.size(); ++i)
      add.emplace_back(functions[i].index(), run.functions[i].self_ns);
    fold(
        p_.functions, [](Function& f) -> RunSpread& { return f.spread; }, add);
    add.clear();
    for (size_t i = 0; i < run.functions.size(); ++i)
      add.emplace_back(functions[i].index(), run.functions[i].inclusive_ns);
    fold(
        p_.functions, [](Function& f) -> RunSpread& { return f.inclusive_spread; }, add);
  }

  void addSummary(const Profile& run) {
    const Summary& r = run.summary;
    Summary& s = p_.summary;
    all_lines_exact_ = all_lines_exact_ && r.exact_line_counts;
    all_calls_exact_ = all_calls_exact_ && (r.traced || r.exact_line_counts);
    if (runs_ == 0) {
      s = r;
      return;
    }
    s.interpreted = s.interpreted || r.interpreted;
    s.total_ns += r.total_ns;
    s.samples += r.samples;
    s.weighted_samples += r.weighted_samples;
    if (s.period_ns != r.period_ns) s.period_ns = std::min(s.period_ns, r.period_ns);
    s.max_depth = std::max(s.max_depth, r.max_depth);
    s.broken_samples += r.broken_samples;
    s.truncated_samples += r.truncated_samples;
    s.profiler_samples += r.profiler_samples;
    s.unknown_samples += r.unknown_samples;
    s.samples_switched_off += r.samples_switched_off;
    s.first_time = std::min(s.first_time, r.first_time);
    if (r.start_realtime_ns && (!s.start_realtime_ns || r.start_realtime_ns < s.start_realtime_ns))
      s.start_realtime_ns = r.start_realtime_ns;
    s.last_time = std::max(s.last_time, r.last_time);
    s.traced = s.traced && r.traced;
    s.trace_timed = s.trace_timed && r.trace_timed;
    s.max_call_depth = std::max(s.max_call_depth, r.max_call_depth);
    s.traced_total_ns += r.traced_total_ns;
    if (s.sampler != r.sampler) s.sampler = format::Sampler::kNone;
    s.cpu_compared = s.cpu_compared && r.cpu_compared;
    s.cpu_ns += r.cpu_ns;
    s.sampled_ns += r.sampled_ns;
    s.unsampled_ns += r.unsampled_ns;
    s.threads_cpu_unknown += r.threads_cpu_unknown;
    // How the first run ended stands for them all; the others' endings are in their files.
  }

  void warn(const std::string& text) {
    if (std::find(p_.warnings.begin(), p_.warnings.end(), text) == p_.warnings.end())
      p_.warnings.push_back(text);
  }

  const MergeOptions& options_;
  Profile p_;
  size_t runs_ = 0;
  bool all_lines_exact_ = true, all_calls_exact_ = true;
  std::unordered_map<std::string, ModuleId> module_index_;
  std::unordered_map<std::string, std::string> build_of_path_;
  std::unordered_map<std::string, FileId> file_index_;
  std::unordered_map<uint64_t, LineId> line_index_;
  std::unordered_map<std::string, FunctionId> function_index_;
  std::unordered_map<uint64_t, uint32_t> edge_index_;
  struct FrameKey {
    uint32_t caller, function, line;
    bool operator==(const FrameKey&) const = default;
  };
  struct FrameKeyHash {
    size_t operator()(const FrameKey& k) const {
      uint64_t h = (uint64_t{k.caller} << 32 | k.function) * 0x9e3779b97f4a7c15ull;
      h ^= (k.line + (h >> 29)) * 0xbf58476d1ce4e5b9ull;
      return static_cast<size_t>(h ^ (h >> 31));
    }
  };
  std::unordered_map<FrameKey, FrameId, FrameKeyHash> frame_index_;
  std::unordered_map<uint32_t, StackId> stack_index_;  // by innermost frame
  std::unordered_map<uint64_t, uint32_t> stack_time_index_;
  std::unordered_map<uint64_t, uint32_t> function_line_index_;
  std::unordered_map<std::string, size_t> stat_index_;
};

}  // namespace

std::string FunctionKey(std::string_view name, std::string_view file, uint32_t line,
                        std::string_view module) {
  std::string key = std::string(name) + '\0' + std::string(file) + '\0' + std::to_string(line);
  // Without a definition site, the module keeps two static functions of one name apart: by its
  // file name, which two builds of one program in two folders share.
  if (file.empty() && !module.empty()) (key += '\0') += module;
  return key;
}

std::string FunctionKey(const Profile& p, const Function& f) {
  return FunctionKey(f.name, f.file.valid() ? p.file(f.file).path : "", f.line,
                     !f.file.valid() && f.module.valid() ? p.module(f.module).name : "");
}

Expected<Profile> MergeProfiles(const std::vector<const Profile*>& profiles,
                                const MergeOptions& options) {
  if (profiles.empty()) return Status::Error("no profile to merge");
  Merger merger(options);
  for (const Profile* p : profiles)
    if (Status s = merger.add(*p); !s.ok()) return s;
  return merger.finish();
}

}  // namespace hotline::model

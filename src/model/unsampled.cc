// The CPU time of each thread that no sample stands for, given to [unsampled] so that the total
// is the threads' CPU time, and the warning naming the threads that lost much.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "model/profile_builder.h"

namespace hotline::model {

namespace {

std::string FormatMs(uint64_t ns) {
  char text[32];
  snprintf(text, sizeof text, "%.1f ms", double(ns) / 1e6);
  return text;
}

}  // namespace

void ProfileBuilder::accountUnsampled(const format::RawProfile& raw) {
  Summary& s = profile_.summary;
  // Wall-clock samples measure elapsed time, and a run whose sampling was switched off has CPU
  // time no sample was meant to see: neither compares with CPU time.
  bool paused = std::any_of(raw.states.begin(), raw.states.end(),
                            [](const format::StateRecord& st) { return st.on == 0; });
  if (!raw.process || raw.process->clock != format::ClockMode::kCpu ||
      raw.process->period_ns == 0 || raw.process->sampler == format::Sampler::kNone || paused)
    return;
  s.cpu_compared = true;
  FunctionId unsampled;
  struct Loss {
    uint64_t ns;
    std::string text;
  };
  std::vector<Loss> losses;
  for (const format::RawThread& t : raw.threads) {
    if (options_.thread && t.tid != *options_.thread) continue;
    ThreadCursor& cursor = thread(t.tid);
    if (!t.cpu_ns) {
      ++s.threads_cpu_unknown;
      continue;
    }
    s.cpu_ns += *t.cpu_ns;
    Thread& th = profile_.threads[cursor.index];
    if (*t.cpu_ns <= th.time_ns) continue;
    uint64_t ns = *t.cpu_ns - th.time_ns;
    if (!unsampled.valid())
      unsampled = pseudoFunction(PseudoKind::kUnsampled, kUnsampledName,
                                 pseudoModule(PseudoKind::kUnsampled, kUnsampledName));
    if (!unsampled_stack_) unsampled_stack_ = pseudoStack(unsampled);
    size_t same = cursor.path->moveTo(unsampled_stack_->leaf);
    graph_.onSample(t.tid, cursor.path->functions(), ns, same);
    addStackTime(unsampled_stack_->stack, cursor.index, ns, 0);
    const Function& fn = profile_.functions[unsampled.index()];
    profile_.lines[line(fn.file, 0).index()].time_ns += ns;
    profile_.modules[fn.module.index()].self_ns += ns;
    th.unsampled_ns = ns;
    th.time_ns += ns;
    s.unsampled_ns += ns;
    std::string name = t.name.empty() ? "" : " (" + t.name + ")";
    losses.push_back(
        Loss{ns, std::to_string(t.tid) + name + " " + FormatMs(ns) + " of " + FormatMs(*t.cpu_ns)});
  }
  // Every thread loses a little (its last partial period, its start before the timer): say so
  // only when it adds up to more than 5% or 10 ms, and name the threads that lost most.
  if (s.unsampled_ns * 20 <= s.cpu_ns && s.unsampled_ns <= 10'000'000) return;
  std::sort(losses.begin(), losses.end(), [](const Loss& a, const Loss& b) { return a.ns > b.ns; });
  std::string text = FormatMs(s.unsampled_ns) + " of the threads' " + FormatMs(s.cpu_ns) +
                     " of CPU time has no sample and is shown as [unsampled]; most in thread" +
                     (losses.size() == 1 ? " " : "s ");
  for (size_t i = 0; i < losses.size() && i < 5; ++i) text += (i ? ", " : "") + losses[i].text;
  if (losses.size() > 5) text += ", and " + std::to_string(losses.size() - 5) + " more";
  profile_.warnings.push_back(text);
}

}  // namespace hotline::model

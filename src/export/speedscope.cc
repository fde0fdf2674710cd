// speedscope's file format (github.com/jlfwong/speedscope/blob/main/src/lib/file-format-spec.ts):
// one sampled profile per thread, its samples in time order, each weighted by the time it
// stands for, frames shared by all profiles. Without kept samples, the distinct stacks with their
// time (per thread, not in time order) stand in for them.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "export/export.h"

namespace hotline::exporter {
namespace {

using nlohmann::json;

struct ThreadSamples {
  std::vector<model::StackId> stacks;
  std::vector<uint64_t> weights;
};

// Frames are per function: speedscope's views group by frame.
json StackFrameIndexes(const model::Profile& p, model::StackId stack) {
  json indexes = json::array();
  if (!stack.valid()) return indexes;
  for (const model::StackFrame& f : p.framesOf(stack)) indexes.push_back(f.function.index());
  return indexes;
}

json Frames(const model::Profile& p) {
  json frames = json::array();
  for (const model::Function& f : p.functions) {
    json frame = {{"name", f.name}};
    if (f.file.valid() && f.pseudo == model::PseudoKind::kNone) frame["file"] = p.file(f.file).path;
    if (f.line) frame["line"] = f.line;
    frames.push_back(std::move(frame));
  }
  return frames;
}

}  // namespace

Expected<std::string> ExportSpeedscope(const model::Profile& profile) {
  std::map<uint64_t, ThreadSamples> by_thread;
  if (!profile.samples.empty()) {
    std::vector<const model::Sample*> ordered;
    for (const model::Sample& s : profile.samples) ordered.push_back(&s);
    std::stable_sort(
        ordered.begin(), ordered.end(),
        [](const model::Sample* a, const model::Sample* b) { return a->time < b->time; });
    for (const model::Sample* s : ordered) {
      by_thread[s->tid].stacks.push_back(s->stack);
      by_thread[s->tid].weights.push_back(s->ns);
    }
  } else {
    for (const model::StackTime& st : profile.stack_times) {
      ThreadSamples& t = by_thread[profile.threads[st.thread].tid];
      t.stacks.push_back(st.stack);
      t.weights.push_back(st.ns);
    }
  }
  if (by_thread.empty()) return Status::Error("the profile holds no samples");
  json profiles = json::array();
  for (const model::Thread& thread : profile.threads) {
    auto it = by_thread.find(thread.tid);
    if (it == by_thread.end()) continue;
    json samples = json::array();
    uint64_t total = 0;
    for (size_t i = 0; i < it->second.stacks.size(); ++i) {
      samples.push_back(StackFrameIndexes(profile, it->second.stacks[i]));
      total += it->second.weights[i];
    }
    std::string name = thread.name.empty() ? fmt::format("thread {}", thread.tid)
                                           : fmt::format("{} (thread {})", thread.name, thread.tid);
    profiles.push_back({{"type", "sampled"},
                        {"name", name},
                        {"unit", "nanoseconds"},
                        {"startValue", 0},
                        {"endValue", total},
                        {"samples", samples},
                        {"weights", it->second.weights}});
  }
  json doc = {{"$schema", "https://www.speedscope.app/file-format-schema.json"},
              {"exporter", "hotline"},
              {"name", profile.summary.exe},
              {"activeProfileIndex", 0},
              {"shared", {{"frames", Frames(profile)}}},
              {"profiles", profiles}};
  return doc.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace hotline::exporter

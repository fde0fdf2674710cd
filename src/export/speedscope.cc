// speedscope's file format (github.com/jlfwong/speedscope/blob/main/src/lib/file-format-spec.ts):
// one sampled profile per thread, its samples in time order, each weighted by the time it
// stands for, frames shared by all profiles. Without kept samples, the distinct stacks with their
// time (per thread, not in time order) stand in for them. A timed trace (--trace=timed) gives
// one evented profile per thread instead: each call opened and closed at its exact times.
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
  std::vector<model::StackFrame> frames;
  p.framesOf(stack, frames);
  for (const model::StackFrame& f : frames) indexes.push_back(f.function.index());
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

std::string ThreadName(const model::Profile& p, uint64_t tid) {
  for (const model::Thread& t : p.threads)
    if (t.tid == tid && !t.name.empty()) return fmt::format("{} (thread {})", t.name, tid);
  return fmt::format("thread {}", tid);
}

// One evented profile per thread from the traced calls (by thread, then entry, outer first).
json EventedProfiles(const model::Profile& p) {
  json profiles = json::array();
  for (size_t i = 0; i < p.calls.size();) {
    uint64_t tid = p.calls[i].tid, origin = p.calls[i].start_ns;
    json events = json::array();
    std::vector<const model::TracedCall*> open;
    auto close_until = [&](uint64_t time) {
      while (!open.empty() && open.back()->end_ns <= time) {
        events.push_back({{"type", "C"},
                          {"frame", open.back()->function.index()},
                          {"at", open.back()->end_ns - origin}});
        open.pop_back();
      }
    };
    uint64_t end = origin;
    for (; i < p.calls.size() && p.calls[i].tid == tid; ++i) {
      const model::TracedCall& c = p.calls[i];
      close_until(c.start_ns);
      events.push_back({{"type", "O"}, {"frame", c.function.index()}, {"at", c.start_ns - origin}});
      open.push_back(&c);
      end = std::max(end, c.end_ns);
    }
    close_until(UINT64_MAX);
    profiles.push_back({{"type", "evented"},
                        {"name", ThreadName(p, tid)},
                        {"unit", "nanoseconds"},
                        {"startValue", 0},
                        {"endValue", end - origin},
                        {"events", events}});
  }
  return profiles;
}

json Document(const model::Profile& p, json profiles) {
  return {{"$schema", "https://www.speedscope.app/file-format-schema.json"},
          {"exporter", "hotline"},
          {"name", p.summary.exe},
          {"activeProfileIndex", 0},
          {"shared", {{"frames", Frames(p)}}},
          {"profiles", std::move(profiles)}};
}

}  // namespace

Expected<std::string> ExportSpeedscope(const model::Profile& profile) {
  if (!profile.calls.empty())
    return Document(profile, EventedProfiles(profile))
               .dump(-1, ' ', false, json::error_handler_t::replace) +
           "\n";
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
    profiles.push_back({{"type", "sampled"},
                        {"name", ThreadName(profile, thread.tid)},
                        {"unit", "nanoseconds"},
                        {"startValue", 0},
                        {"endValue", total},
                        {"samples", samples},
                        {"weights", it->second.weights}});
  }
  return Document(profile, std::move(profiles))
             .dump(-1, ' ', false, json::error_handler_t::replace) +
         "\n";
}

}  // namespace hotline::exporter

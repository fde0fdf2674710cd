// The Trace Event Format (docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU),
// read by Perfetto and chrome://tracing: per thread, the samples in time order become begin/end
// events, a function's span running from the first sample that has it on the stack to the
// sample that no longer has it (or one period after the thread's last sample before a gap).
// A timed trace (--trace=timed) is exported from its calls instead, each a complete event with
// its exact entry and duration. Marks are instant events.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <span>

#include "export/export.h"
#include "model/stack_path.h"

namespace hotline::exporter {
namespace {

using nlohmann::json;

// Where the trace's time starts: the first sample, or the first traced call.
uint64_t Origin(const model::Profile& p) {
  uint64_t origin = p.samples.empty() ? UINT64_MAX : p.summary.first_time;
  for (const model::TracedCall& c : p.calls) origin = std::min(origin, c.start_ns);
  return origin == UINT64_MAX ? 0 : origin;
}

// The process's id, as Perfetto shows it (1 when the profile does not know it).
uint64_t Pid(const model::Profile& p) { return p.summary.pid ? p.summary.pid : 1; }

// Microseconds since `origin`: the format's unit.
double Micros(uint64_t origin, uint64_t time) {
  return time >= origin ? static_cast<double>(time - origin) / 1e3 : 0.0;
}

// Where the events go as they are made: each event is encoded on its own and handed over, so
// a trace of millions of events never exists whole in memory.
class EventWriter {
 public:
  explicit EventWriter(const std::function<void(std::string_view)>& out) : out_(out) {}
  void add(const json& event) {
    out_(first_ ? "" : ",");
    first_ = false;
    out_(event.dump(-1, ' ', false, json::error_handler_t::replace));
  }

 private:
  const std::function<void(std::string_view)>& out_;
  bool first_ = true;
};

class ThreadEvents {
 public:
  ThreadEvents(const model::Profile& p, uint64_t origin, uint64_t tid, EventWriter& events)
      : p_(p), origin_(origin), tid_(tid), events_(events), path_(p.stack_frames) {}

  // Moves the open frames to the stack ending at `leaf` at `time`: ends those that differ,
  // begins the new ones. Costs the frames that change (model::StackPath), not the depth.
  void moveTo(model::FrameId leaf, uint64_t time) {
    size_t common = path_.moveTo(leaf);
    std::span<const model::FunctionId> stack = path_.functions();
    common = std::min(common, opened_.size());
    // Frames begun where others ended begin a nanosecond later: at one time, speedscope takes a
    // begin before an end of the same name, and so would end the wrong frame.
    uint64_t begin = opened_.size() > common ? time + 1 : time;
    while (opened_.size() > common) end(time);
    for (size_t i = common; i < stack.size(); ++i) {
      // No args (file, line): speedscope would make them part of the frame's name.
      events_.add({{"name", p_.function(stack[i]).name},
                   {"cat", "function"},
                   {"ph", "B"},
                   {"pid", Pid(p_)},
                   {"tid", tid_},
                   {"ts", Micros(origin_, begin)}});
      opened_.push_back(stack[i]);
    }
  }
  void closeAll(uint64_t time) {
    while (!opened_.empty()) end(time);
    path_.clear();
  }

 private:
  void end(uint64_t time) {
    events_.add({{"name", p_.function(opened_.back()).name},
                 {"cat", "function"},
                 {"ph", "E"},
                 {"pid", Pid(p_)},
                 {"tid", tid_},
                 {"ts", Micros(origin_, time)}});
    opened_.pop_back();
  }
  const model::Profile& p_;
  uint64_t origin_;
  uint64_t tid_;
  EventWriter& events_;
  model::StackPath path_;                 // the stack of the last sample
  std::vector<model::FunctionId> opened_;  // the frames begun and not ended, outermost first
};

void AddThread(const model::Profile& p, uint64_t origin, uint64_t tid,
               const std::vector<const model::Sample*>& samples, EventWriter& events) {
  ThreadEvents thread(p, origin, tid, events);
  uint64_t covered_until = 0;
  for (const model::Sample* s : samples) {
    // A gap longer than a sample's own time: the thread was off the CPU, nothing ran.
    if (covered_until && s->time > covered_until + s->ns) thread.closeAll(covered_until);
    thread.moveTo(s->stack.valid() ? p.stacks[s->stack.index()].leaf : model::FrameId(), s->time);
    covered_until = s->time + s->ns;
  }
  thread.closeAll(covered_until);
}

// Each traced call, a complete event.
void AddCalls(const model::Profile& p, uint64_t origin, EventWriter& events) {
  for (const model::TracedCall& c : p.calls)
    events.add({{"name", p.function(c.function).name},
                {"cat", "call"},
                {"ph", "X"},
                {"pid", Pid(p)},
                {"tid", c.tid},
                {"ts", static_cast<double>(c.start_ns - origin) / 1e3},
                {"dur", static_cast<double>(c.end_ns - c.start_ns) / 1e3}});
}

}  // namespace

Status WriteChrome(const model::Profile& profile,
                   const std::function<void(std::string_view)>& out) {
  if (profile.samples.empty() && profile.calls.empty())
    return Status::Error(
        "no timed samples or traced calls to make a trace of (the profile holds neither)");
  std::map<uint64_t, std::vector<const model::Sample*>> by_thread;
  for (const model::Sample& s : profile.samples) by_thread[s.tid].push_back(&s);
  const uint64_t origin = Origin(profile);
  // The document's keys in the order a JSON object of them would print them (sorted).
  json other = {{"exporter", "hotline"}, {"exe", profile.summary.exe}};
  out("{\"displayTimeUnit\":\"ms\",\"otherData\":");
  out(other.dump(-1, ' ', false, json::error_handler_t::replace));
  out(",\"traceEvents\":[");
  EventWriter events(out);
  events.add({{"name", "process_name"},
              {"ph", "M"},
              {"pid", Pid(profile)},
              {"args", {{"name", profile.summary.exe}}}});
  for (const model::Thread& t : profile.threads)
    events.add(
        {{"name", "thread_name"},
         {"ph", "M"},
         {"pid", Pid(profile)},
         {"tid", t.tid},
         {"args", {{"name", t.name.empty() ? fmt::format("thread {}", t.tid) : t.name}}}});
  if (!profile.calls.empty()) {
    AddCalls(profile, origin, events);  // exact: the samples would only repeat them, less precisely
  } else {
    for (auto& [tid, samples] : by_thread) {
      std::stable_sort(
          samples.begin(), samples.end(),
          [](const model::Sample* a, const model::Sample* b) { return a->time < b->time; });
      AddThread(profile, origin, tid, samples, events);
    }
  }
  for (const model::Mark& m : profile.marks)
    events.add({{"name", m.label},
                {"cat", "mark"},
                {"ph", "i"},
                {"s", "t"},
                {"pid", Pid(profile)},
                {"tid", m.tid},
                {"ts", Micros(origin, m.time)}});
  out("]}\n");
  return Status();
}

Expected<std::string> ExportChrome(const model::Profile& profile) {
  std::string text;
  Status status = WriteChrome(profile, [&](std::string_view bytes) { text += bytes; });
  if (!status.ok()) return status;
  return text;
}

}  // namespace hotline::exporter

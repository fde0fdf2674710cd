// The Trace Event Format (docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU),
// read by Perfetto and chrome://tracing: per thread, the samples in time order become begin/end
// events, a function's span running from the first sample that has it on the stack to the
// sample that no longer has it (or one period after the thread's last sample before a gap).
// A timed trace (--trace=timed) is exported from its calls instead, each a complete event with
// its exact entry and duration. Marks are instant events.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "export/export.h"

namespace hotline::exporter {
namespace {

using nlohmann::json;

// Where the trace's time starts: the first sample, or the first traced call.
uint64_t Origin(const model::Profile& p) {
  uint64_t origin = p.samples.empty() ? UINT64_MAX : p.summary.first_time;
  for (const model::TracedCall& c : p.calls) origin = std::min(origin, c.start_ns);
  return origin == UINT64_MAX ? 0 : origin;
}

// Microseconds since the origin: the format's unit.
double Micros(const model::Profile& p, uint64_t time) {
  uint64_t origin = Origin(p);
  return time >= origin ? static_cast<double>(time - origin) / 1e3 : 0.0;
}

// The functions of a sample's stack, outermost first.
std::vector<model::FunctionId> StackFunctions(const model::Profile& p, const model::Sample& s) {
  std::vector<model::FunctionId> functions;
  if (!s.stack.valid()) return functions;
  std::vector<model::StackFrame> frames;
  p.framesOf(s.stack, frames);
  for (const model::StackFrame& f : frames) functions.push_back(f.function);
  return functions;
}

class ThreadEvents {
 public:
  ThreadEvents(const model::Profile& p, uint64_t tid, json& events)
      : p_(p), tid_(tid), events_(events) {}

  // Moves the open frames to `stack` at `time`: ends those that differ, begins the new ones.
  void moveTo(const std::vector<model::FunctionId>& stack, uint64_t time) {
    size_t common = 0;
    while (common < open_.size() && common < stack.size() && open_[common] == stack[common])
      ++common;
    // Frames begun where others ended begin a nanosecond later: at one time, speedscope takes a
    // begin before an end of the same name, and so would end the wrong frame.
    uint64_t begin = open_.size() > common ? time + 1 : time;
    while (open_.size() > common) end(time);
    for (size_t i = common; i < stack.size(); ++i) {
      // No args (file, line): speedscope would make them part of the frame's name.
      events_.push_back({{"name", p_.function(stack[i]).name},
                         {"cat", "function"},
                         {"ph", "B"},
                         {"pid", 1},
                         {"tid", tid_},
                         {"ts", Micros(p_, begin)}});
      open_.push_back(stack[i]);
    }
  }
  void closeAll(uint64_t time) {
    while (!open_.empty()) end(time);
  }

 private:
  void end(uint64_t time) {
    events_.push_back({{"name", p_.function(open_.back()).name},
                       {"cat", "function"},
                       {"ph", "E"},
                       {"pid", 1},
                       {"tid", tid_},
                       {"ts", Micros(p_, time)}});
    open_.pop_back();
  }
  const model::Profile& p_;
  uint64_t tid_;
  json& events_;
  std::vector<model::FunctionId> open_;
};

void AddThread(const model::Profile& p, uint64_t tid,
               const std::vector<const model::Sample*>& samples, json& events) {
  ThreadEvents thread(p, tid, events);
  uint64_t covered_until = 0;
  for (const model::Sample* s : samples) {
    // A gap longer than a sample's own time: the thread was off the CPU, nothing ran.
    if (covered_until && s->time > covered_until + s->ns) thread.closeAll(covered_until);
    thread.moveTo(StackFunctions(p, *s), s->time);
    covered_until = s->time + s->ns;
  }
  thread.closeAll(covered_until);
}

// Each traced call, a complete event.
void AddCalls(const model::Profile& p, json& events) {
  uint64_t origin = Origin(p);
  for (const model::TracedCall& c : p.calls)
    events.push_back({{"name", p.function(c.function).name},
                      {"cat", "call"},
                      {"ph", "X"},
                      {"pid", 1},
                      {"tid", c.tid},
                      {"ts", static_cast<double>(c.start_ns - origin) / 1e3},
                      {"dur", static_cast<double>(c.end_ns - c.start_ns) / 1e3}});
}

}  // namespace

Expected<std::string> ExportChrome(const model::Profile& profile) {
  if (profile.samples.empty() && profile.calls.empty())
    return Status::Error(
        "no timed samples or traced calls to make a trace of (the profile holds neither)");
  std::map<uint64_t, std::vector<const model::Sample*>> by_thread;
  for (const model::Sample& s : profile.samples) by_thread[s.tid].push_back(&s);
  json events = json::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", 1},
                    {"args", {{"name", profile.summary.exe}}}});
  for (const model::Thread& t : profile.threads)
    events.push_back(
        {{"name", "thread_name"},
         {"ph", "M"},
         {"pid", 1},
         {"tid", t.tid},
         {"args", {{"name", t.name.empty() ? fmt::format("thread {}", t.tid) : t.name}}}});
  if (!profile.calls.empty()) {
    AddCalls(profile, events);  // exact: the samples would only repeat them, less precisely
  } else {
    for (auto& [tid, samples] : by_thread) {
      std::stable_sort(
          samples.begin(), samples.end(),
          [](const model::Sample* a, const model::Sample* b) { return a->time < b->time; });
      AddThread(profile, tid, samples, events);
    }
  }
  for (const model::Mark& m : profile.marks)
    events.push_back({{"name", m.label},
                      {"cat", "mark"},
                      {"ph", "i"},
                      {"s", "t"},
                      {"pid", 1},
                      {"tid", m.tid},
                      {"ts", Micros(profile, m.time)}});
  json doc = {{"traceEvents", events},
              {"displayTimeUnit", "ms"},
              {"otherData", {{"exporter", "hotline"}, {"exe", profile.summary.exe}}}};
  return doc.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace hotline::exporter

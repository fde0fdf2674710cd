#include "model/watch.h"

#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <tuple>
#include <unordered_map>

namespace hotline::model {
namespace {

int64_t SignExtend(uint64_t raw, uint64_t size) {
  if (size >= 8) return int64_t(raw);
  unsigned shift = unsigned(64 - 8 * size);
  return int64_t(raw << shift) >> shift;
}

double AsFloat(uint64_t raw, uint64_t size) {
  if (size == 4) {
    float f;
    uint32_t bits = uint32_t(raw);
    std::memcpy(&f, &bits, sizeof f);
    return double(f);
  }
  double d;
  std::memcpy(&d, &raw, sizeof d);
  return d;
}

// The value as a number, for ordering and graphs.
double AsNumber(uint64_t raw, uint64_t size, format::WatchType type) {
  switch (type) {
    case format::WatchType::kSigned:
    case format::WatchType::kEnum:
      return double(SignExtend(raw, size));
    case format::WatchType::kFloat:
      return AsFloat(raw, size);
    default:
      return double(raw);
  }
}

// a < b as the type orders values (exactly, not through a double).
bool Less(uint64_t a, uint64_t b, uint64_t size, format::WatchType type) {
  switch (type) {
    case format::WatchType::kSigned:
    case format::WatchType::kEnum:
      return SignExtend(a, size) < SignExtend(b, size);
    case format::WatchType::kFloat: {
      double x = AsFloat(a, size), y = AsFloat(b, size);
      if (x != x || y != y) return (x != x) < (y != y);  // NaN after every number
      return x < y;
    }
    default:
      return a < b;
  }
}

std::string TypeName(format::WatchType type, uint64_t size) {
  switch (type) {
    case format::WatchType::kSigned:
      return fmt::format("int{}", 8 * size);
    case format::WatchType::kUnsigned:
      return fmt::format("uint{}", 8 * size);
    case format::WatchType::kFloat:
      return size == 4 ? "float" : "double";
    case format::WatchType::kPointer:
      return "pointer";
    case format::WatchType::kEnum:
      return "enum";
    case format::WatchType::kBool:
      return "bool";
  }
  return "?";
}

struct Building {
  WatchedVariable variable;
  std::vector<std::pair<int64_t, std::string>> enumerators;
  std::unordered_map<uint64_t, uint64_t> values;    // raw → writes
  std::unordered_map<uint64_t, uint64_t> ips;       // → writes
  std::unordered_map<uint64_t, uint64_t> ip_time;   // an ip's first time, to find its module
  std::unordered_map<uint64_t, uint64_t> threads;   // tid → writes
  std::vector<std::pair<uint64_t, uint64_t>> hits;  // (time, raw)
};

WatchValue Value(const Building& b, uint64_t raw, uint64_t writes) {
  const WatchedVariable& v = b.variable;
  return WatchValue{raw, FormatWatchValue(raw, v.size, v.type, b.enumerators), writes};
}

}  // namespace

std::string FormatWatchValue(uint64_t raw, uint64_t size, format::WatchType type,
                             const std::vector<std::pair<int64_t, std::string>>& enumerators) {
  switch (type) {
    case format::WatchType::kSigned:
      return fmt::format("{}", SignExtend(raw, size));
    case format::WatchType::kUnsigned:
      return fmt::format("{}", raw);
    case format::WatchType::kFloat:
      return size == 4 ? fmt::format("{}", float(AsFloat(raw, size)))
                       : fmt::format("{}", AsFloat(raw, size));
    case format::WatchType::kPointer:
      return fmt::format("{:#x}", raw);
    case format::WatchType::kEnum: {
      int64_t value = SignExtend(raw, size);
      for (const auto& [v, name] : enumerators)
        if (v == value) return fmt::format("{} ({})", name, value);
      return fmt::format("{}", value);
    }
    case format::WatchType::kBool:
      return raw == 0 ? "false" : raw == 1 ? "true" : fmt::format("true ({})", raw);
  }
  return fmt::format("{:#x}", raw);
}

Expected<WatchProfile> BuildWatchProfile(const format::RawProfile& raw, AddressResolver& resolver) {
  if (raw.watches.empty())
    return Status::Error(
        "the profile holds no watched variables (record with --watch NAME, or call "
        "hotline_watch() in the program)");
  std::vector<Building> building;
  std::unordered_map<uint64_t, size_t> by_id;
  for (const format::RawWatch& w : raw.watches) {
    auto [it, inserted] = by_id.try_emplace(w.id, building.size());
    if (inserted) {
      Building b;
      WatchedVariable& v = b.variable;
      v.id = w.id;
      v.name = w.name;
      v.address = w.address;
      v.size = w.size;
      v.type = w.type;
      v.type_name = TypeName(w.type, w.size);
      v.from_api = w.flags & format::kWatchFromApi;
      v.reads_counted = w.flags & format::kWatchReads;
      b.enumerators = w.enumerators;
      building.push_back(std::move(b));
    }
    if (w.flags & format::kWatchEnded) building[it->second].variable.ended = true;
  }
  WatchProfile profile;
  uint64_t first_time = UINT64_MAX;
  for (const format::RawWatchHits& record : raw.watch_hits) {
    for (const format::WatchHit& hit : record.hits) {
      auto it = by_id.find(hit.watch);
      if (it == by_id.end()) continue;  // its WATCH was in a damaged chunk: counted below
      Building& b = building[it->second];
      ++b.variable.writes;
      ++b.values[hit.value];
      if (b.ips[hit.ip]++ == 0) b.ip_time[hit.ip] = hit.time;
      ++b.threads[record.tid];
      b.hits.emplace_back(hit.time, hit.value);
      first_time = std::min(first_time, hit.time);
    }
    for (const format::WatchTotal& total : record.totals) {
      auto it = by_id.find(total.watch);
      if (it == by_id.end()) continue;
      WatchedVariable& v = building[it->second].variable;
      v.kernel_counted = true;
      v.kernel_writes += total.writes;
      v.reads += total.reads;
    }
  }
  uint64_t orphans = 0;
  for (const format::RawWatchHits& record : raw.watch_hits)
    for (const format::WatchHit& hit : record.hits) orphans += by_id.count(hit.watch) == 0;
  if (orphans)
    profile.notes.push_back(fmt::format(
        "{} hits of watches whose definition was lost (a damaged chunk) are left out", orphans));

  for (Building& b : building) {
    WatchedVariable& v = b.variable;
    if (v.kernel_counted && v.kernel_writes > v.writes) v.lost = v.kernel_writes - v.writes;
    v.distinct = b.values.size();
    if (!b.hits.empty()) {
      std::stable_sort(b.hits.begin(), b.hits.end(),
                       [](const auto& x, const auto& y) { return x.first < y.first; });
      v.first = Value(b, b.hits.front().second, b.values[b.hits.front().second]);
      v.last = Value(b, b.hits.back().second, b.values[b.hits.back().second]);
      uint64_t lo = b.hits.front().second, hi = lo;
      for (const auto& [value, writes] : b.values) {
        if (Less(value, lo, v.size, v.type)) lo = value;
        if (Less(hi, value, v.size, v.type)) hi = value;
      }
      v.min = Value(b, lo, b.values[lo]);
      v.max = Value(b, hi, b.values[hi]);
      size_t step = (b.hits.size() + kTimelinePoints - 1) / kTimelinePoints;
      for (size_t i = 0; i < b.hits.size(); i += step)
        v.timeline.push_back(
            WatchPoint{b.hits[i].first - first_time, AsNumber(b.hits[i].second, v.size, v.type)});
    }
    std::vector<std::pair<uint64_t, uint64_t>> values(b.values.begin(), b.values.end());
    std::sort(values.begin(), values.end(), [&](const auto& x, const auto& y) {
      if (x.second != y.second) return x.second > y.second;
      return Less(x.first, y.first, v.size, v.type);
    });
    for (size_t i = 0; i < values.size() && i < kTopValues; ++i)
      v.top_values.push_back(Value(b, values[i].first, values[i].second));
    // The writing lines: the instruction before each trap's address.
    std::map<std::tuple<std::string, std::string, uint32_t>, uint64_t> lines;
    for (const auto& [ip, writes] : b.ips) {
      const format::RawModule* module = raw.moduleAt(ip, b.ip_time[ip]);
      std::tuple<std::string, std::string, uint32_t> key{"[unknown]", "", 0};
      if (module) {
        symbolize::ModuleInfo info{module->path, module->build_id, module->bias};
        const symbolize::ResolvedAddress& r = resolver.resolve(info, ip, true);
        if (!r.frames.empty()) {
          const symbolize::ResolvedFrame& f = r.frames.front();
          key = {f.function.empty() ? "[unknown]" : f.function, f.file, f.line};
        } else {
          size_t slash = module->path.rfind('/');
          std::get<0>(key) =
              "[" + module->path.substr(slash == std::string::npos ? 0 : slash + 1) + "]";
        }
      }
      lines[key] += writes;
    }
    for (const auto& [key, writes] : lines)
      v.lines.push_back(WatchLine{std::get<0>(key), std::get<1>(key), std::get<2>(key), writes});
    std::stable_sort(v.lines.begin(), v.lines.end(),
                     [](const WatchLine& x, const WatchLine& y) { return x.writes > y.writes; });
    for (const auto& [tid, writes] : b.threads) v.threads.push_back(WatchThread{tid, writes});
    std::sort(v.threads.begin(), v.threads.end(), [](const WatchThread& x, const WatchThread& y) {
      return x.writes != y.writes ? x.writes > y.writes : x.tid < y.tid;
    });
    profile.variables.push_back(std::move(v));
  }
  for (const std::string& note : raw.notes)
    if (note.find("watch") != std::string::npos) profile.notes.push_back(note);
  return profile;
}

}  // namespace hotline::model

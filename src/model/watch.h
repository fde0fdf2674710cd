// What watched variables did, from a profile's WATCH and WATCH_HITS records (`hotline record
// --watch`, hotline_watch()): per variable the exact writes, the reads when they were counted,
// the range of the values written read by the variable's type, the most frequent values and the
// lines that wrote it. Built from the raw records the way the heap is; views only print it.
//
// Definitions (docs/watch.md):
//  - writes: hits recorded (one per instruction that wrote the object). `kernel_writes` is the
//    kernel's own count of write traps; `lost` = kernel_writes − writes when positive (a
//    thread's hit buffer was full), never hidden.
//  - min, max, distinct, top values: over the values written, each hit one value, compared as
//    the type says (two's complement, IEEE 754, address, enumerator, bool).
//  - lines: the instruction before each hit's address (the writing one), symbolized.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "format/raw_profile.h"
#include "model/build.h"

namespace hotline::model {

struct WatchLine {
  std::string function;  // "[unknown]" when the address cannot be resolved
  std::string file;      // "" when unknown
  uint32_t line = 0;
  uint64_t writes = 0;
};

struct WatchValue {
  uint64_t raw = 0;  // the object's bytes, zero-extended
  std::string text;  // as the type reads it: "-12", "0.5", "0x7ffd…", "GREEN (5)", "true"
  uint64_t writes = 0;
};

struct WatchThread {
  uint64_t tid = 0, writes = 0;
};

struct WatchPoint {
  uint64_t time_ns = 0;  // since the first hit of any variable
  double value = 0;      // the value as a number, for graphs
};

struct WatchedVariable {
  uint64_t id = 0;
  std::string name;
  uint64_t address = 0, size = 0;
  format::WatchType type = format::WatchType::kSigned;
  std::string type_name;  // "signed", "unsigned", "float", "double", "pointer", "enum", "bool"
  bool from_api = false;  // hotline_watch(), not --watch
  bool ended = false;     // hotline_unwatch() ended it before the run did
  uint64_t writes = 0;
  bool kernel_counted = false;  // the kernel's counts arrived (the watchpoints were closed)
  uint64_t kernel_writes = 0, lost = 0;
  bool reads_counted = false;  // --watch-reads
  uint64_t reads = 0;
  WatchValue min, max, first, last;  // of the values written (writes > 0)
  uint64_t distinct = 0;
  std::vector<WatchValue> top_values;  // the most frequent first, at most kTopValues
  std::vector<WatchLine> lines;        // by writes, most first
  std::vector<WatchThread> threads;    // by writes, most first
  std::vector<WatchPoint> timeline;    // at most about kTimelinePoints, in time order
};

inline constexpr size_t kTopValues = 5;
inline constexpr size_t kTimelinePoints = 1000;

struct WatchProfile {
  std::vector<WatchedVariable> variables;  // in the order they were first watched
  std::vector<std::string> notes;          // what the runtime said about watching
};

// The text of `raw` as `type` and `size` read it (enumerators name enum values).
std::string FormatWatchValue(uint64_t raw, uint64_t size, format::WatchType type,
                             const std::vector<std::pair<int64_t, std::string>>& enumerators);

// Fails when the profile holds no WATCH record (recorded without --watch or hotline_watch).
Expected<WatchProfile> BuildWatchProfile(const format::RawProfile& raw, AddressResolver& resolver);

}  // namespace hotline::model

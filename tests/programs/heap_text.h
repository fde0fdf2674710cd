// Every field of a model::HeapProfile as text, a line each: two heaps built in different ways
// (a whole RawProfile, or streamed while the file is read) are the same when their texts are.
#pragma once

#include <sstream>
#include <string>

#include "model/heap.h"

namespace hotline::testing {

inline std::string HeapText(const model::HeapProfile& h) {
  std::ostringstream o;
  o << "peak " << h.peak_bytes << " at " << h.peak_time_ns << " ns\n"
    << "total " << h.total_bytes << " in " << h.alloc_calls << " calls, " << h.free_calls
    << " frees, " << h.temporary_calls << " temporary\n"
    << "leaked " << h.leaked_bytes << " in " << h.leaked_calls << "\n"
    << "mmap " << h.mmap_calls << " " << h.mmap_bytes << " munmap " << h.munmap_calls << " leaked "
    << h.mmap_leaked_bytes << "\n"
    << "unknown frees " << h.unknown_frees << "\n"
    << "sampled " << h.sample_bytes << " " << h.sampled_calls << " errors " << h.total_bytes_error
    << " " << h.peak_bytes_error << "\n";
  for (const model::HeapSite& s : h.sites) {
    o << "site " << s.function << " " << s.file << ":" << s.line << " via " << s.via << ": "
      << s.calls << " " << s.bytes << " peak " << s.peak_bytes << " temporary " << s.temporary_calls
      << " leaked " << s.leaked_calls << " " << s.leaked_bytes << "\n";
    for (const model::HeapChain& c : s.chains) {
      o << "  chain " << c.calls << " " << c.bytes << ":";
      for (const std::string& f : c.frames) o << " " << f;
      o << "\n";
    }
  }
  for (const model::HeapStack& s : h.stacks) {
    o << "stack " << s.calls << " " << s.bytes << " live " << s.live_calls << " " << s.live_bytes
      << ":";
    for (const model::HeapFrame& f : s.frames)
      o << " " << f.function << "@" << f.file << ":" << f.line << "/" << f.address
        << (f.system ? "s" : "");
    o << "\n";
  }
  for (const model::HeapLeak& l : h.leaks) {
    o << "leak " << l.calls << " " << l.bytes << ":";
    for (const std::string& f : l.stack) o << " " << f;
    o << "\n";
  }
  for (const auto& [size_class, calls] : h.size_histogram)
    o << "size " << size_class << " " << calls << "\n";
  for (const model::HeapPoint& p : h.timeline) o << "point " << p.time_ns << " " << p.bytes << "\n";
  return o.str();
}

}  // namespace hotline::testing

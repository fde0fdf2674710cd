// Exact numbers from -finstrument-functions tracing, laid over a Profile built from samples:
// calls per function and per call-graph edge (CALL_COUNTS), the deepest call stack, and in
// timed mode each function's exact inclusive and self time and its shortest, longest and
// average call (TRACE_EVENTS). docs/tracing.md.
#pragma once

#include <cstdint>
#include <functional>

#include "format/raw_profile.h"
#include "model/profile.h"

namespace hotline::model {

// The function a traced entry address belongs to (the builder symbolizes it).
using FunctionAt = std::function<FunctionId(uint64_t address)>;

// Applies the trace records of `raw` to `profile` (no-op when there are none). Call after the
// call graph from samples is final: exact calls replace estimated ones, and edges that no
// sample saw are added with their calls and no time, so every sum still holds.
// With `keep_calls`, every timed call also goes into profile.calls.
void ApplyTrace(const format::RawProfile& raw, const FunctionAt& function_at, Profile& profile,
                std::optional<uint64_t> only_thread, bool keep_calls = false);

}  // namespace hotline::model

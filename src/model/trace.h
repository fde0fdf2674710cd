// Exact numbers from -finstrument-functions tracing, laid over a Profile built from samples:
// calls per function and per call-graph edge (CALL_SITE_COUNTS in counts mode, the entries of
// the event streams in timed mode, CALL_COUNTS from front-ends), the deepest call stack (timed
// mode), and in
// timed mode each function's exact inclusive and self time and its shortest, longest and
// average call (TRACE_EVENTS). docs/tracing.md.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "format/raw_profile.h"
#include "model/profile.h"

namespace hotline::model {

// The function a traced entry address belongs to at `time` (the builder symbolizes it with the
// image mapped there then).
using FunctionAt = std::function<FunctionId(uint64_t address, uint64_t time)>;
// The frames of the call instruction before a return address at `time`, outermost first (its
// inline chain); empty when nothing is known there.
using FramesBefore = std::function<std::vector<FunctionId>(uint64_t return_address, uint64_t time)>;

// Applies the trace records of `raw` to `profile` (no-op when there are none). Call after the
// call graph from samples is final: exact calls replace estimated ones, and edges that no
// sample saw are added with their calls and no time, so every sum still holds.
// With `keep_calls`, every timed call also goes into profile.calls.
// CALL_SITE_COUNTS find their callers with `frames_before` (docs/format.md, "Call-site counts").
void ApplyTrace(const format::RawProfile& raw, const FunctionAt& function_at,
                const FramesBefore& frames_before, Profile& profile,
                std::optional<uint64_t> only_thread, bool keep_calls = false);

}  // namespace hotline::model

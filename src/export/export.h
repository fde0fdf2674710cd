// Exporters: a model::Profile (or a model::HeapProfile) written in the formats other tools read
// (docs/export.md). One file per format. Every number comes from the model (DESIGN.md rule 3):
// exporters only select, order and encode. Each returns the whole file as bytes, or a Status
// saying what the profile lacks for that format; writing the file is WriteFileAtomically's job.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "format/raw_profile.h"
#include "model/heap.h"
#include "model/profile.h"

namespace hotline::exporter {

enum class Format { kPprof, kCallgrind, kFolded, kChrome, kSpeedscope, kJson };

// The formats by name, in the order `--help` and errors list them.
const std::vector<std::pair<std::string_view, Format>>& KnownFormats();
// "pprof, callgrind, ..." for messages.
std::string KnownFormatNames();
std::optional<Format> FormatNamed(std::string_view name);

// What a folded stack's number counts.
enum class FoldedUnit {
  kDefault,  // samples, as FlameGraph's tools count them; ns for a measured profile (TeX, Perl)
  kSamples,
  kNs,
};

struct ExportOptions {
  bool lines = false;       // folded: the leaf frame carries its line (`name:line`)
  bool per_thread = false;  // folded: each stack starts with its thread (`thread 123`)
  FoldedUnit unit = FoldedUnit::kDefault;
};

// Brendan Gregg's folded stacks: `outer;...;inner N`, N in samples or nanoseconds (unit), one
// line per distinct stack (per thread with per_thread), heaviest first.
Expected<std::string> ExportFolded(const model::Profile& profile, const ExportOptions& options);

// The callgrind format, version 1: per-line self time of each function, calls with their
// inclusive time, exact line counts as a second event when the profile has them.
Expected<std::string> ExportCallgrind(const model::Profile& profile);
// The callgrind format for a --counts-only profile of a --coverage build: instructions executed
// (Ir) per line of each function, counted from the block counters, as callgrind itself counts
// them; callgrind_annotate shows the same numbers for both files. `raw` holds the profile's
// LINE_INSTRUCTIONS and FUNCTION_INSTRUCTIONS.
Expected<std::string> ExportCallgrindInstructions(const model::Profile& profile,
                                                  const format::RawProfile& raw);

// pprof's profile.proto, gzipped: samples/count and cpu/nanoseconds per distinct stack.
Expected<std::string> ExportPprof(const model::Profile& profile);
// The heap as pprof: alloc_objects, alloc_space, inuse_objects, inuse_space per stack.
Expected<std::string> ExportHeapPprof(const model::Profile& profile,
                                      const model::HeapProfile& heap);

// hotline's JSON of the model (docs/export-schema.json); `heap` is the heap summary, or null
// when the profile holds no heap records.
Expected<std::string> ExportJson(const model::Profile& profile, const model::HeapProfile* heap);

// The Trace Event Format (Perfetto, chrome://tracing): begin/end events per thread from the
// samples in time order (Profile::samples: BuildOptions::keep_samples), marks as instants.
// WriteChrome hands the document to `out` piece by piece as it makes it (memory: the samples'
// pointers and one stack, not the document); ExportChrome gathers the pieces.
Status WriteChrome(const model::Profile& profile, const std::function<void(std::string_view)>& out);
Expected<std::string> ExportChrome(const model::Profile& profile);

// speedscope's JSON: a sampled profile per thread, from the kept samples in time order (or the
// distinct stacks when none were kept).
Expected<std::string> ExportSpeedscope(const model::Profile& profile);

// Writes `bytes` to a temporary file beside `path`, then renames it over `path`: either the
// whole file is there or nothing (an old file stays as it was).
Status WriteFileAtomically(const std::string& path, std::string_view bytes);
// The same for a file written piece by piece: `write` is given a function that appends bytes
// to the temporary file; its failure, or a failed write, leaves `path` as it was.
Status WriteFileAtomically(
    const std::string& path,
    const std::function<Status(const std::function<void(std::string_view)>& out)>& write);

}  // namespace hotline::exporter

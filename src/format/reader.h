// Reads a .hotline file (docs/format.md) and hands every record to a visitor. Never trusts a
// byte: damaged chunks are skipped and counted, a truncated tail is accepted, and only a file
// that cannot be a readable profile at all (missing, wrong magic, damaged header, too new)
// fails with a Status.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "format/schema.h"

namespace hotline::format {

// What the reader saw besides the records: the header, and every kind of damage.
struct ReadStats {
  uint16_t version = 0;
  uint16_t min_reader_version = 0;
  uint64_t features = 0;
  uint64_t file_bytes = 0;
  uint64_t chunks = 0;           // chunks read whole
  uint64_t damaged_chunks = 0;   // chunks dropped: bad checksum, length or compression
  uint64_t bytes_skipped = 0;    // bytes passed over while looking for the next chunk
  uint64_t truncated_bytes = 0;  // bytes of an incomplete last chunk
  uint64_t records = 0;
  uint64_t unknown_records = 0;       // kinds this reader does not know (a newer writer): skipped
  uint64_t malformed_records = 0;     // records whose fields do not parse: skipped
  std::vector<std::string> problems;  // one line per problem, the first few only
  // A file of several runs (`hotline merge`) holds whole profiles one after another: the reader
  // stops at the end of one, and this is the offset of the next one's header (0: none).
  uint64_t next_run = 0;

  bool damaged() const {
    return damaged_chunks || bytes_skipped || truncated_bytes || malformed_records;
  }
  // One line summarising the damage, empty when there is none.
  std::string summary() const;
  // Adds another run's counts and problems (the header fields stay this one's).
  void add(const ReadStats& run);
};

// Receives records in file order. Pointers inside records are valid only during the call.
class RecordVisitor {
 public:
  virtual ~RecordVisitor() = default;
  virtual void onProcess(const ProcessRecord&) {}
  virtual void onString(const StringRecord&) {}
  virtual void onModuleLoad(const ModuleLoadRecord&) {}
  virtual void onModuleUnload(const ModuleUnloadRecord&) {}
  virtual void onThreadStart(const ThreadStartRecord&) {}
  virtual void onThreadEnd(const ThreadEndRecord&) {}
  virtual void onThreadName(const ThreadNameRecord&) {}
  virtual void onStackNode(const StackNodeRecord&) {}
  virtual void onSample(const SampleRecord&) {}
  virtual void onMark(const MarkRecord&) {}
  virtual void onState(const StateRecord&) {}
  virtual void onStats(const StatsRecord&) {}
  virtual void onDisabled(const DisabledRecord&) {}
  virtual void onEnd(const EndRecord&) {}
  virtual void onTraceFunction(const TraceFunctionRecord&) {}
  virtual void onCallCounts(const CallCountsRecord&) {}
  virtual void onCallSiteCounts(const CallSiteCountsRecord&) {}
  virtual void onTraceEvents(const TraceEventsRecord&) {}
  virtual void onAlloc(const AllocRecord&) {}
  virtual void onFree(const FreeRecord&) {}
  virtual void onLineCounts(const LineCountsRecord&) {}
  virtual void onFunctionCount(const FunctionCountRecord&) {}
  virtual void onLineInstructions(const LineInstructionsRecord&) {}
  virtual void onFunctionInstructions(const FunctionInstructionsRecord&) {}
  virtual void onNote(const NoteRecord&) {}
  virtual void onFrame(const FrameRecord&) {}
  virtual void onSource(const SourceRecord&) {}
  virtual void onWatch(const WatchRecord&) {}
  virtual void onWatchHits(const WatchHitsRecord&) {}
  virtual void onSize(const SizeRecord&) {}
  virtual void onTexCommands(const TexCommandsRecord&) {}
};

// Reads the file at `path`: the run that begins at byte `offset` (the first, by default; the
// next one's offset is in stats->next_run). Errors name the file.
Status ReadProfileFile(const std::string& path, RecordVisitor& visitor, ReadStats* stats,
                       uint64_t offset = 0);
// Reads a profile held in memory; `name` is used in messages.
Status ReadProfileBytes(const uint8_t* data, size_t size, std::string_view name,
                        RecordVisitor& visitor, ReadStats* stats);

}  // namespace hotline::format

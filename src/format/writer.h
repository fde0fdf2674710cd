// Writes a .hotline file (docs/format.md). Used by the runtime, so it never throws and never
// aborts: every failure (allocation, write) is sticky and visible through failed()/error().
// Not thread-safe: one thread owns a Writer. Never call it from a signal handler.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/loaded_image.h"
#include "format/byte_buffer.h"
#include "format/schema.h"

namespace hotline::format {

// The MODULE_LOAD of an image loaded in this process (`path` an interned string id). The record
// points into `image`'s build id: add it while `image` lives.
inline ModuleLoadRecord ModuleLoadOf(const base::LoadedImage& image, uint64_t time, uint64_t id,
                                     uint64_t path) {
  ModuleLoadRecord r;
  r.time = time;
  r.id = id;
  r.path = path;
  r.bias = image.bias;
  r.start = image.start;
  r.size = image.size;
  r.file_offset = image.file_offset;
  r.build_id = image.build_id;
  r.build_id_size = image.build_id_size;
  return r;
}

class Writer {
 public:
  Writer();
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Starts a file on `fd` (which the caller keeps owning) and writes its header.
  bool begin(int fd, uint64_t features);
  // Continues a file that another writer began (fd positioned at its end). With id_base 0 only
  // records without string or stack ids may be added (LINE_COUNTS, FUNCTION_COUNT); a stream
  // of its own (the recorder's samples) numbers its ids from kAppendedIdBase, above the first
  // writer's.
  bool beginAppend(int fd, uint64_t id_base = 0);

  // Returns the id of `text`, writing a STRING record the first time it is seen.
  uint64_t internString(const char* text, size_t size);
  uint64_t internString(const char* text);
  // Returns the id of the stack node (parent, address), writing a STACK_NODE the first time.
  uint64_t internStackNode(uint64_t parent, uint64_t address);
  // The id the next new stack node gets: a caller writing a run of nodes with STACK_NODES knows
  // their ids before it writes them (their parents may be among them).
  uint64_t nextStackNodeId() const { return id_base_ + nodes_count_ + 1; }
  // Writes r.count new nodes in one STACK_NODES record; r.first_id must be nextStackNodeId().
  // For a caller that interns its nodes itself (the TeX hooks): the nodes do not enter the
  // interning table, so never write the same node through internStackNode too.
  void add(const StackNodesRecord& r);
  void add(const SamplesRecord& r);

  void add(const ProcessRecord& r);
  void add(const ModuleLoadRecord& r);
  void add(const ModuleUnloadRecord& r);
  void add(const ThreadStartRecord& r);
  void add(const ThreadEndRecord& r);
  void add(const ThreadNameRecord& r);
  void add(const SampleRecord& r);
  void add(const MarkRecord& r);
  void add(const StateRecord& r);
  void add(const StatsRecord& r);
  void add(const DisabledRecord& r);
  void add(const EndRecord& r);
  void add(const TraceFunctionRecord& r);
  void add(const CallCountsRecord& r);
  void add(const CallSiteCountsRecord& r);
  void add(const TraceEventsRecord& r);
  void add(const AllocRecord& r);
  void add(const FreeRecord& r);
  void add(const LineCountsRecord& r);
  void add(const FunctionCountRecord& r);
  void add(const LineInstructionsRecord& r);
  void add(const FunctionInstructionsRecord& r);
  void add(const NoteRecord& r);
  void add(const FrameRecord& r);
  void add(const FramesRecord& r);
  void add(const SourceRecord& r);
  void add(const WatchRecord& r);
  void add(const WatchHitsRecord& r);
  void add(const SizeRecord& r);
  void add(const TexCommandsRecord& r);

  // Bytes of records waiting for the next flush.
  size_t pendingBytes() const { return chunk_.size(); }
  // Compresses the pending records into one chunk and writes it. No-op when nothing is pending.
  bool flush();

  // Forgets the interned strings and stacks (after fork, a child starts a file of its own).
  void reset();
  // Goes on writing the same file through another descriptor (the runtime moves its own when
  // the program takes the number).
  void setFd(int fd) { fd_ = fd; }

  bool failed() const { return error_ != nullptr; }
  const char* error() const { return error_; }
  uint64_t bytesWritten() const { return bytes_written_; }

 private:
  struct StringSlot;
  struct NodeSlot;

  void addString(uint64_t id, const char* text, size_t size);
  void addStackNode(uint64_t id, uint64_t parent, uint64_t address);
  void beginRecord(RecordKind kind);
  void endRecord();
  void time(uint64_t t);
  bool writeAll(const void* data, size_t size, const void* more = nullptr, size_t more_size = 0);
  bool growStrings();
  bool growNodes();
  void fail(const char* why) {
    if (!error_) error_ = why;
  }

  int fd_ = -1;
  uint64_t id_base_ = 0;
  ByteBuffer chunk_;       // records of the chunk being built (raw payload)
  ByteBuffer record_;      // body of the record being built
  ByteBuffer compressed_;  // scratch for zstd
  RecordKind kind_ = RecordKind::kProcess;
  uint64_t last_time_ = 0;
  void* zstd_ = nullptr;  // ZSTD_CCtx*
  const char* error_ = nullptr;
  uint64_t bytes_written_ = 0;

  StringSlot* strings_ = nullptr;
  size_t strings_capacity_ = 0, strings_count_ = 0;
  ByteBuffer string_arena_;
  NodeSlot* nodes_ = nullptr;
  size_t nodes_capacity_ = 0, nodes_count_ = 0;
};

}  // namespace hotline::format

// Timed mode's event stream: the pool of event buffers the hooks append to, the appending done
// off their fast paths, and the writer side that turns the buffers into TRACE_EVENTS records.
#include <pthread.h>

#include <atomic>
#include <cstdint>

#include "runtime/trace_internal.h"

namespace hotline::rt {
namespace {

constexpr int kMaxBuffers = 512;  // 128 MiB: past that, events are dropped and counted

pthread_mutex_t g_buffers_lock = PTHREAD_MUTEX_INITIALIZER;
EventBuffer* g_full_head = nullptr;  // newest first
EventBuffer* g_free = nullptr;
int g_buffers_made = 0;

}  // namespace

EventBuffer* TakeBuffer(uint64_t tid, uint64_t tick) {
  pthread_mutex_lock(&g_buffers_lock);
  EventBuffer* b = g_free;
  if (b) {
    g_free = b->next;
  } else if (g_buffers_made < kMaxBuffers) {
    b = static_cast<EventBuffer*>(MapZeroed(sizeof(EventBuffer)));
    if (b) ++g_buffers_made;
  }
  pthread_mutex_unlock(&g_buffers_lock);
  if (!b) return nullptr;
  b->next = nullptr;
  b->tid = tid;
  b->base_tick = tick;
  b->size = 0;
  b->tail_bytes.store(0, std::memory_order_relaxed);
  return b;
}

namespace {

void HandOver(EventBuffer* b) {
  pthread_mutex_lock(&g_buffers_lock);
  b->next = g_full_head;
  g_full_head = b;
  pthread_mutex_unlock(&g_buffers_lock);
}

// The buffer is full: hand it to the writer and take the next. Returns where the event goes (null
// when out of buffers).
__attribute__((noinline)) uint8_t* NextBuffer(TraceThread* tt) {
  tt->buffer->size = BufferedBytes(tt);
  HandOver(tt->buffer);
  UseBuffer(tt, TakeBuffer(uint64_t(tt->tid), tt->last_tick));
  if (!tt->buffer) {
    // Out of buffers: this thread's stream stops here (counted); counts mode goes on.
    g_events_dropped.fetch_add(1);
  }
  return tt->pos;
}

}  // namespace

void AppendExit(TraceThread* tt) {
  uint64_t tick = __builtin_ia32_rdtsc();
  uint8_t* p = tt->pos;
  if (p > tt->limit && !(p = NextBuffer(tt))) return;
  WriteShort(tt, p, kExit, tick);
}

void AppendEntry(TraceThread* tt, uint32_t id, uint64_t tick, uint64_t call_site) {
  uint8_t* p = tt->pos;
  if (p > tt->limit && !(p = NextBuffer(tt))) return;
  *p = uint8_t(format::kShortLong + (call_site ? 3 : 2));
  uint8_t* end = PutVarint(PutVarint(p + 1, tick - tt->last_tick), id);
  if (call_site) end = PutVarint(end, call_site);
  tt->last_tick = tick;
  __atomic_store_n(&tt->pos, end, __ATOMIC_RELEASE);
  AddTail(tt, p, end);
}

namespace {

// `tail_bytes` read before `size` (see EventBuffer).
void WriteEvents(format::Writer& writer, const EventBuffer* b, uint32_t tail_bytes, uint32_t size) {
  if (size == 0) return;
  uint64_t events = size > tail_bytes ? size - tail_bytes : 0;
  writer.add(format::TraceEventsRecord{b->tid, b->base_tick, events, b->data, size,
                                       /*short_code=*/true});
}

}  // namespace

void WriteOpenEvents(format::Writer& writer, TraceThread* tt) {
  if (!tt->buffer) return;
  uint32_t tail_bytes = tt->buffer->tail_bytes.load(std::memory_order_acquire);
  WriteEvents(writer, tt->buffer, tail_bytes, BufferedBytes(tt));
}

void WriteFullBuffers(format::Writer& writer) {
  pthread_mutex_lock(&g_buffers_lock);
  EventBuffer* full = g_full_head;
  g_full_head = nullptr;
  pthread_mutex_unlock(&g_buffers_lock);
  // Oldest first, so each thread's buffers are written in order.
  EventBuffer* ordered = nullptr;
  while (full) {
    EventBuffer* next_full = full->next;
    full->next = ordered;
    ordered = full;
    full = next_full;
  }
  while (ordered) {
    EventBuffer* b = ordered;
    ordered = b->next;
    WriteEvents(writer, b, b->tail_bytes.load(), b->size);
    pthread_mutex_lock(&g_buffers_lock);
    b->next = g_free;
    g_free = b;
    pthread_mutex_unlock(&g_buffers_lock);
  }
}

void ResetBuffersAfterFork() {
  g_full_head = nullptr;  // the parent writes those
  pthread_mutex_init(&g_buffers_lock, nullptr);
}

}  // namespace hotline::rt

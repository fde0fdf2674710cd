// A single-producer single-consumer ring of fixed-size sample entries. The producer is the
// sampling signal handler on the owning thread; the consumer is the writer thread. Lock-free,
// allocation-free, async-signal-safe on the producer side.
#pragma once

#include <sys/mman.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace hotline::rt {

struct SampleEntry {
  uint64_t time;
  uint64_t weight;
  uint32_t flags;
  uint32_t depth;
  uint64_t frames[];  // innermost first; `depth` of them
};

class SampleRing {
 public:
  // Maps memory for entries of up to `max_depth` frames. Not for signal handlers.
  bool init(uint32_t max_depth) {
    entry_bytes_ = (sizeof(SampleEntry) + size_t(max_depth) * 8 + 15) & ~size_t(15);
    capacity_ = kRingBytes / entry_bytes_;
    if (capacity_ < 16) capacity_ = 16;
    void* mem = mmap(nullptr, capacity_ * entry_bytes_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return false;
    base_ = static_cast<uint8_t*>(mem);
    head_.store(0);
    tail_.store(0);
    return true;
  }
  void release() {
    if (base_) munmap(base_, capacity_ * entry_bytes_);
    base_ = nullptr;
  }
  bool ready() const { return base_ != nullptr; }

  // Producer: the entry to fill, or nullptr when full. Call publish() when filled.
  SampleEntry* reserve() {
    uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) >= capacity_) return nullptr;
    return entryAt(head);
  }
  void publish() {
    head_.store(head_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

  // Consumer: the oldest entry, or nullptr when empty. Call pop() when done with it.
  const SampleEntry* peek() const {
    uint64_t tail = tail_.load(std::memory_order_relaxed);
    if (tail == head_.load(std::memory_order_acquire)) return nullptr;
    return entryAt(tail);
  }
  void pop() { tail_.store(tail_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }
  // Consumer, after fork in the child: whatever the parent left is the parent's to write.
  void discard() { tail_.store(head_.load()); }

 private:
  static constexpr size_t kRingBytes = 512 * 1024;  // ~250 deep samples: 100 ms at 2.5 kHz
  SampleEntry* entryAt(uint64_t index) const {
    return reinterpret_cast<SampleEntry*>(base_ + (index % capacity_) * entry_bytes_);
  }
  uint8_t* base_ = nullptr;
  size_t entry_bytes_ = 0;
  size_t capacity_ = 0;
  std::atomic<uint64_t> head_{0};
  std::atomic<uint64_t> tail_{0};
};

}  // namespace hotline::rt

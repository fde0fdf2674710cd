// FlatMap, the open-addressing map the heap's replay (heap_replay.cc) keeps its live blocks,
// stack nodes and threads in. Internal to src/model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace hotline::model {

// A map from a 64-bit key (an address, a thread id, a stack node) to `Value`, by open
// addressing with linear probing: the replay looks one up for every event, and a map of nodes
// would allocate one for every block. Holds at most half its slots; never shrinks.
template <typename Value>
class FlatMap {
 public:
  static constexpr size_t kNone = ~size_t(0);

  FlatMap() { resize(16); }

  // The slot of `key`, or kNone.
  size_t find(uint64_t key) const {
    for (size_t i = home(key);; i = next(i)) {
      const Slot& s = slots_[i];
      if (!s.used) return kNone;
      if (s.key == key) return i;
    }
  }
  // Starts loading the slot where a look-up of `key` begins: a table larger than the caches
  // then costs no wait when the look-up comes.
  void prefetch(uint64_t key) const { __builtin_prefetch(&slots_[home(key)]); }

  // The value in a slot, valid until the next insert or erase.
  Value& at(size_t slot) { return slots_[slot].value; }

  // The slot of `key`, whose value is value-initialised when it is new; and whether it is.
  std::pair<size_t, bool> insert(uint64_t key) {
    if ((count_ + 1) * 2 > slots_.size()) resize(slots_.size() * 2);
    for (size_t i = home(key);; i = next(i)) {
      Slot& s = slots_[i];
      if (!s.used) {
        s = Slot{key, true, Value{}};
        ++count_;
        return {i, true};
      }
      if (s.key == key) return {i, false};
    }
  }

  // Empties a slot, moving back the entries after it that probed past it.
  void erase(size_t hole) {
    for (size_t j = next(hole); slots_[j].used; j = next(j)) {
      size_t h = home(slots_[j].key);
      // The entry at j stays when its home lies cyclically in (hole, j].
      bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
      if (stays) continue;
      slots_[hole] = slots_[j];
      hole = j;
    }
    slots_[hole].used = false;
    --count_;
  }

  template <typename Visit>
  void forEach(Visit visit) const {
    for (const Slot& s : slots_)
      if (s.used) visit(s.key, s.value);
  }

 private:
  struct Slot {
    uint64_t key = 0;
    bool used = false;
    Value value{};
  };

  size_t home(uint64_t key) const {
    return size_t((key * 0x9E3779B97F4A7C15ull) >> shift_);  // Fibonacci hashing
  }
  size_t next(size_t i) const { return (i + 1) & mask_; }

  void resize(size_t size) {  // a power of two
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(size, Slot{});
    mask_ = size - 1;
    shift_ = 64u - unsigned(__builtin_ctzll(size));
    count_ = 0;
    for (const Slot& s : old)
      if (s.used) at(insert(s.key).first) = s.value;
  }

  std::vector<Slot> slots_;
  size_t count_ = 0, mask_ = 0;
  unsigned shift_ = 60;
};

}  // namespace hotline::model

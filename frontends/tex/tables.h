// The hook library's lookup tables: open addressing and paged arrays, with no allocation per
// entry, in blocks from the arena in tables.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <utility>
#include <vector>

namespace hotline::tex {

// A zeroed block for a lookup table, and its return: tables.cc says where they come from.
void* TableAlloc(size_t bytes);
void TableFree(void* p);

// Open addressing from a pair of integers to an id (0 = none): the stack nodes, frames and call
// edges the hooks ask for, without an allocation per entry. TeX's line numbers and every id here
// are 32-bit. A table made large enough not to grow in most runs.
class PairIndex {
 public:
  explicit PairIndex(int log2_size) { Allocate(size_t(1) << log2_size); }
  // The id of (a, b), or `fresh` after storing it (*added set).
  uint32_t findOrAdd(uint64_t a, uint32_t b, uint32_t fresh, bool* added) {
    for (size_t i = Hash(a, b) & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.value && s.a == a && s.b == b) {
        *added = false;
        return s.value;
      }
      if (!s.value) {
        s = Slot{a, b, fresh};
        *added = true;
        if (++used_ * 4 > (mask_ + 1) * 3) Grow();
        return fresh;
      }
    }
  }

 private:
  struct Slot {  // 16 bytes
    uint64_t a = 0;
    uint32_t b = 0;
    uint32_t value = 0;
  };
  struct Free {
    void operator()(Slot* p) const { TableFree(p); }
  };
  static size_t Hash(uint64_t a, uint64_t b) {
    uint64_t h = (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full);
    return size_t(h ^ (h >> 29));
  }
  void Allocate(size_t size) {
    slots_.reset(static_cast<Slot*>(TableAlloc(size * sizeof(Slot))));
    mask_ = size - 1;
  }
  void Grow() {
    std::unique_ptr<Slot[], Free> old = std::move(slots_);
    size_t old_size = mask_ + 1;
    Allocate(old_size * 2);
    for (size_t j = 0; j < old_size; ++j) {
      const Slot& s = old[j];
      if (!s.value) continue;
      size_t i = Hash(s.a, s.b) & mask_;
      while (slots_[i].value) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }
  std::unique_ptr<Slot[], Free> slots_;
  size_t mask_ = 0;
  size_t used_ = 0;
};

// An array indexed by one of TeX's pointers (an eqtb index, a memory word), in pages made when
// first touched: TeX's pointers spread over a range of millions (the hash's extra entries start
// far above eqtb; token lists fill memory from its top), and a vector as long as the range would
// zero tens of megabytes at every run. Its entries are trivially copyable, all-zero when empty.
template <typename T>
class PagedArray {
 public:
  static_assert((sizeof(T) & (sizeof(T) - 1)) == 0, "entries a power of two in size");
  static constexpr size_t kPerPage = (size_t(256) << 10) / sizeof(T);  // 256 KiB pages
  PagedArray() = default;
  PagedArray(const PagedArray&) = delete;
  PagedArray& operator=(const PagedArray&) = delete;
  ~PagedArray() {
    for (T* page : pages_) std::free(page);
  }
  // The entry at `i`, its page made (zeroed) if needed.
  T& at(size_t i) {
    size_t page = i / kPerPage;
    if (__builtin_expect(page >= pages_.size() || !pages_[page], 0)) MakePage(page);
    return pages_[page][i % kPerPage];
  }

 private:
  // calloc: a block this large is pages the kernel zeroes when first touched, so that the parts
  // of a page no pointer falls in cost nothing. The entries are all-zero when value-initialized.
  void MakePage(size_t page) {
    if (page >= pages_.size()) pages_.resize(page + 1, nullptr);
    if (!pages_[page]) {
      pages_[page] = static_cast<T*>(std::calloc(kPerPage, sizeof(T)));
      if (!pages_[page]) std::abort();  // as operator new would, without exceptions
    }
  }
  std::vector<T*> pages_;
};

}  // namespace hotline::tex

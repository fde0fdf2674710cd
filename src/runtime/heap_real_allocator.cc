// The heap collector's way to the real allocator: the shims (heap_shims.cc) find libc's
// functions with dlsym on their first call, and a bootstrap arena serves what is asked before
// they are found (dlsym allocates itself).
#include <dlfcn.h>

#include <atomic>
#include <cstddef>

#include "runtime/heap_internal.h"
#include "runtime/signals.h"

namespace hotline::rt {

RealAllocator g_real;
std::atomic<int> g_resolved{0};

alignas(64) unsigned char g_boot[kBootBytes];
std::atomic<int> g_boot_count{0};
void* g_boot_blocks[kMaxBootBlocks];

namespace {

std::atomic<size_t> g_boot_used{0};
struct BootBlock {
  size_t size;
  size_t pad;  // keeps the block 16-aligned
};

template <typename Fn>
void Find(Fn* out, const char* name) {
  *out = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

// libc's functions as dlsym found them. g_real's entries call them marked as inside the
// allocator (signals.h: InAllocator), so that a signal ending the process waits for the call
// to return before the profile's end, which allocates, is written.
RealAllocator g_libc;

void* Malloc(size_t size) {
  InAllocator in;
  return g_libc.malloc(size);
}
void Free(void* p) {
  InAllocator in;
  g_libc.free(p);
}
void* Calloc(size_t count, size_t size) {
  InAllocator in;
  return g_libc.calloc(count, size);
}
void* Realloc(void* p, size_t size) {
  InAllocator in;
  return g_libc.realloc(p, size);
}
int PosixMemalign(void** out, size_t align, size_t size) {
  InAllocator in;
  return g_libc.posix_memalign(out, align, size);
}
void* AlignedAlloc(size_t align, size_t size) {
  InAllocator in;
  return g_libc.aligned_alloc(align, size);
}
void* Memalign(size_t align, size_t size) {
  InAllocator in;
  return g_libc.memalign(align, size);
}
void* Valloc(size_t size) {
  InAllocator in;
  return g_libc.valloc(size);
}
void* Pvalloc(size_t size) {
  InAllocator in;
  return g_libc.pvalloc(size);
}

}  // namespace

void* BootAlloc(size_t size, size_t align) {
  if (align < 16) align = 16;
  size_t used = g_boot_used.load();
  for (;;) {
    size_t start = (used + sizeof(BootBlock) + align - 1) & ~(align - 1);
    size_t end = start + size;
    if (end > kBootBytes) return nullptr;
    if (g_boot_used.compare_exchange_weak(used, end)) {
      void* p = g_boot + start;
      reinterpret_cast<BootBlock*>(static_cast<unsigned char*>(p) - sizeof(BootBlock))->size = size;
      int n = g_boot_count.fetch_add(1);
      if (n < kMaxBootBlocks) g_boot_blocks[n] = p;
      return p;  // static storage: already zeroed
    }
  }
}

size_t BootSize(const void* p) {
  return reinterpret_cast<const BootBlock*>(static_cast<const unsigned char*>(p) -
                                            sizeof(BootBlock))
      ->size;
}

bool Resolve() {
  if (g_resolved.load(std::memory_order_acquire) == 2) return true;
  int expected = 0;
  if (!g_resolved.compare_exchange_strong(expected, 1)) return false;  // another is resolving
  RealAllocator r{};
  Find(&r.malloc, "malloc");
  Find(&r.free, "free");
  Find(&r.calloc, "calloc");
  Find(&r.realloc, "realloc");
  Find(&r.posix_memalign, "posix_memalign");
  Find(&r.aligned_alloc, "aligned_alloc");
  Find(&r.memalign, "memalign");
  Find(&r.valloc, "valloc");
  Find(&r.pvalloc, "pvalloc");
  Find(&r.mmap, "mmap");
  Find(&r.munmap, "munmap");
  g_libc = r;
  r.malloc = r.malloc ? Malloc : nullptr;
  r.free = r.free ? Free : nullptr;
  r.calloc = r.calloc ? Calloc : nullptr;
  r.realloc = r.realloc ? Realloc : nullptr;
  r.posix_memalign = r.posix_memalign ? PosixMemalign : nullptr;
  r.aligned_alloc = r.aligned_alloc ? AlignedAlloc : nullptr;
  r.memalign = r.memalign ? Memalign : nullptr;
  r.valloc = r.valloc ? Valloc : nullptr;
  r.pvalloc = r.pvalloc ? Pvalloc : nullptr;
  g_real = r;
  g_resolved.store(2, std::memory_order_release);
  return true;
}

}  // namespace hotline::rt

// Where the lookup tables' blocks (tables.h) come from.
#include "tables.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>

namespace hotline::tex {
namespace {

// The lookup tables' blocks, zeroed. The first ones share one 2 MiB block, aligned and marked
// MADV_HUGEPAGE, which the kernel backs with a single huge page where it can: a probe lands
// anywhere in its table, and in 4 KiB pages most probes of a long run missed the TLB as well as
// the cache. Blocks of tables that grow past it come from calloc.
constexpr size_t kTableArenaBytes = size_t(2) << 20;
char* table_arena = nullptr;
size_t table_arena_used = 0;

}  // namespace

void* TableAlloc(size_t bytes) {
  if (!table_arena && table_arena_used == 0) {
    table_arena_used = kTableArenaBytes;  // tried once: full unless the mapping succeeds
    void* m = mmap(nullptr, 2 * kTableArenaBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED) {
      uintptr_t start = reinterpret_cast<uintptr_t>(m);
      uintptr_t aligned = (start + kTableArenaBytes - 1) & ~(kTableArenaBytes - 1);
      if (aligned > start) munmap(m, aligned - start);
      munmap(reinterpret_cast<void*>(aligned + kTableArenaBytes),
             start + 2 * kTableArenaBytes - aligned - kTableArenaBytes);
      table_arena = reinterpret_cast<char*>(aligned);
      madvise(table_arena, kTableArenaBytes, MADV_HUGEPAGE);
      table_arena_used = 0;
    }
  }
  bytes = (bytes + 63) & ~size_t(63);
  if (table_arena_used + bytes <= kTableArenaBytes) {
    void* p = table_arena + table_arena_used;
    table_arena_used += bytes;
    return p;
  }
  void* p = std::calloc(1, bytes);
  if (!p) std::abort();  // as operator new would, without exceptions
  return p;
}

void TableFree(void* p) {
  if (p < table_arena || p >= table_arena + kTableArenaBytes) std::free(p);
}

}  // namespace hotline::tex

// The heap collector's interposed functions: malloc and its family, anonymous mmap and munmap,
// and every form of operator new and delete. Each asks whether the call is the program's to
// record (heap_internal.h), calls the real function and records the allocation or release, in
// the exact mode or the sampled one (heap_sampling.cc).
//
// Compiled with -fexceptions (src/runtime/CMakeLists.txt): operator new may throw bad_alloc
// through these shims, which must unwind cleanly.
#include <dlfcn.h>
#include <errno.h>
#include <sys/mman.h>

#include <cstddef>
#include <cstring>
#include <new>

#include "runtime/heap_internal.h"

#define HOTLINE_EXPORT extern "C" __attribute__((visibility("default")))

namespace hotline::rt {

__thread int t_busy __attribute__((tls_model("initial-exec"))) = 0;

namespace {

// The shape of every sampled allocation: the real call, then the decision.
template <typename Call>
inline void* SampledAllocation(Call call, size_t size, format::AllocKind kind, const void* caller,
                               const CallerFrame& frame) {
  void* p;
  {
    Busy busy;
    p = call();
  }
  if (p && TakeSample(size, caller)) RecordSampledAlloc(p, size, kind, frame);
  return p;
}

}  // namespace
}  // namespace hotline::rt

using namespace hotline::rt;
using hotline::format::AllocKind;
using hotline::format::FreeKind;

HOTLINE_EXPORT void* malloc(size_t size) {
  if (!Ready()) return BootAlloc(size, 16);
  if (SampledMode())
    return SampledAllocation([&] { return g_real.malloc(size); }, size, AllocKind::kMalloc,
                             __builtin_return_address(0), HOTLINE_CALLER_FRAME);
  if (!Recording(__builtin_return_address(0))) return g_real.malloc(size);
  Busy busy;
  void* p = g_real.malloc(size);
  if (p) RecordAlloc(p, size, AllocKind::kMalloc, HOTLINE_CALLER_FRAME);
  return p;
}

HOTLINE_EXPORT void free(void* p) {
  if (!p || InBoot(p)) return;
  if (!Ready()) return;  // cannot happen: only boot blocks exist before resolution
  if (SampledMode()) {
    if (TakeSampledRelease(p)) RecordSampledRelease(p, FreeKind::kFree, 0);
    return g_real.free(p);
  }
  if (!Recording(__builtin_return_address(0))) return g_real.free(p);
  Busy busy;
  RecordFree(p, FreeKind::kFree, 0, PreciseNow());
  g_real.free(p);
}

HOTLINE_EXPORT void* calloc(size_t count, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (!Ready()) return BootAlloc(bytes, 16);
  if (SampledMode())
    return SampledAllocation([&] { return g_real.calloc(count, size); }, bytes, AllocKind::kCalloc,
                             __builtin_return_address(0), HOTLINE_CALLER_FRAME);
  if (!Recording(__builtin_return_address(0))) return g_real.calloc(count, size);
  Busy busy;
  void* p = g_real.calloc(count, size);
  if (p) RecordAlloc(p, bytes, AllocKind::kCalloc, HOTLINE_CALLER_FRAME);
  return p;
}

HOTLINE_EXPORT void* realloc(void* old, size_t size) {
  if (old && InBoot(old)) {
    // A bootstrap block moves into the real heap; the arena never frees.
    void* p = malloc(size);
    if (p) std::memcpy(p, old, BootSize(old) < size ? BootSize(old) : size);
    return p;
  }
  if (!Ready()) return BootAlloc(size, 16);
  if (SampledMode()) {
    bool was_sampled = old && TakeSampledRelease(old);
    uint64_t before = was_sampled ? PreciseNow() : 0;
    void* p =
        SampledAllocation([&] { return g_real.realloc(old, size); }, size, AllocKind::kRealloc,
                          __builtin_return_address(0), HOTLINE_CALLER_FRAME);
    if (was_sampled) {
      Busy busy;
      if (p || size == 0) {
        RecordFree(old, FreeKind::kRealloc, 0, before);
      } else {
        g_sampled.insert(uint64_t(old));  // realloc failed: the old block lives on
      }
    }
    return p;
  }
  if (!Recording(__builtin_return_address(0))) return g_real.realloc(old, size);
  Busy busy;
  uint64_t before = PreciseNow();
  void* p = g_real.realloc(old, size);
  if (old && (p || size == 0)) RecordFree(old, FreeKind::kRealloc, 0, before);
  if (p) RecordAlloc(p, size, AllocKind::kRealloc, HOTLINE_CALLER_FRAME);
  return p;
}

HOTLINE_EXPORT int posix_memalign(void** out, size_t align, size_t size) {
  if (!Ready()) {
    *out = BootAlloc(size, align);
    return *out ? 0 : ENOMEM;
  }
  if (SampledMode()) {
    int result = 0;
    SampledAllocation(
        [&]() -> void* {
          result = g_real.posix_memalign(out, align, size);
          return result == 0 ? *out : nullptr;
        },
        size, AllocKind::kAligned, __builtin_return_address(0), HOTLINE_CALLER_FRAME);
    return result;
  }
  if (!Recording(__builtin_return_address(0))) return g_real.posix_memalign(out, align, size);
  Busy busy;
  int result = g_real.posix_memalign(out, align, size);
  if (result == 0) RecordAlloc(*out, size, AllocKind::kAligned, HOTLINE_CALLER_FRAME);
  return result;
}

// aligned_alloc, memalign, valloc and pvalloc share one shape.
#define HOTLINE_ALIGNED_SHIM(NAME, PARAMS, ARGS, SIZE, BOOT_ALIGN)                          \
  HOTLINE_EXPORT void* NAME PARAMS {                                                        \
    if (!Ready()) return BootAlloc(SIZE, BOOT_ALIGN);                                       \
    if (SampledMode())                                                                      \
      return SampledAllocation([&] { return g_real.NAME ARGS; }, SIZE, AllocKind::kAligned, \
                               __builtin_return_address(0), HOTLINE_CALLER_FRAME);          \
    if (!Recording(__builtin_return_address(0))) return g_real.NAME ARGS;                   \
    Busy busy;                                                                              \
    void* p = g_real.NAME ARGS;                                                             \
    if (p) RecordAlloc(p, SIZE, AllocKind::kAligned, HOTLINE_CALLER_FRAME);                 \
    return p;                                                                               \
  }
HOTLINE_ALIGNED_SHIM(aligned_alloc, (size_t align, size_t size), (align, size), size, align)
HOTLINE_ALIGNED_SHIM(memalign, (size_t align, size_t size), (align, size), size, align)
HOTLINE_ALIGNED_SHIM(valloc, (size_t size), (size), size, 4096)
HOTLINE_ALIGNED_SHIM(pvalloc, (size_t size), (size), size, 4096)
#undef HOTLINE_ALIGNED_SHIM

HOTLINE_EXPORT void* mmap(void* address, size_t length, int prot, int flags, int fd, off_t offset) {
  if (!Ready() || !g_real.mmap) {
    errno = ENOSYS;
    return MAP_FAILED;
  }
  if (!(flags & MAP_ANONYMOUS)) return g_real.mmap(address, length, prot, flags, fd, offset);
  if (SampledMode()) {
    void* p = MAP_FAILED;
    SampledAllocation(
        [&]() -> void* {
          p = g_real.mmap(address, length, prot, flags, fd, offset);
          return p == MAP_FAILED ? nullptr : p;
        },
        length, AllocKind::kMmap, __builtin_return_address(0), HOTLINE_CALLER_FRAME);
    return p;
  }
  if (!Recording(__builtin_return_address(0)))
    return g_real.mmap(address, length, prot, flags, fd, offset);
  Busy busy;
  void* p = g_real.mmap(address, length, prot, flags, fd, offset);
  if (p != MAP_FAILED) RecordAlloc(p, length, AllocKind::kMmap, HOTLINE_CALLER_FRAME);
  return p;
}

HOTLINE_EXPORT int munmap(void* address, size_t length) {
  if (!Ready() || !g_real.munmap) {
    errno = ENOSYS;
    return -1;
  }
  if (SampledMode()) {
    if (TakeSampledRelease(address)) RecordSampledRelease(address, FreeKind::kMunmap, length);
    return g_real.munmap(address, length);
  }
  if (!Recording(__builtin_return_address(0))) return g_real.munmap(address, length);
  Busy busy;
  uint64_t before = PreciseNow();
  int result = g_real.munmap(address, length);
  if (result == 0) RecordFree(address, FreeKind::kMunmap, length, before);
  return result;
}

// operator new and delete, all their forms, replaced as the C++ standard allows. Each calls the
// real one (libstdc++'s, which calls malloc: unrecorded under Busy) so that bad_alloc,
// new-handlers and nothrow behave exactly as before.
namespace {

using Nothrow = const std::nothrow_t&;
using Align = std::align_val_t;

template <typename Fn, typename... Args>
void* NewWith(Fn real, AllocKind kind, void* caller, CallerFrame frame, size_t size, Args... args) {
  if (!real) return nullptr;
  if (SampledMode())
    return SampledAllocation([&] { return real(size, args...); }, size, kind, caller, frame);
  if (!Recording(caller)) return real(size, args...);
  Busy busy;
  void* p = real(size, args...);
  if (p) RecordAlloc(p, size, kind, frame);
  return p;
}

template <typename Fn, typename... Args>
void DeleteWith(Fn real, FreeKind kind, void* caller, void* p, Args... args) {
  if (!real || !p) return;
  if (SampledMode()) {
    if (TakeSampledRelease(p)) RecordSampledRelease(p, kind, 0);
    return real(p, args...);
  }
  if (!Recording(caller)) return real(p, args...);
  Busy busy;
  RecordFree(p, kind, 0, PreciseNow());
  real(p, args...);
}

}  // namespace

#define HOTLINE_REAL(FN_TYPE, MANGLED) \
  static FN_TYPE real = reinterpret_cast<FN_TYPE>(dlsym(RTLD_NEXT, MANGLED))
#define HOTLINE_NEW_FORM(MANGLED, KIND, PARAMS, ...)                                         \
  __attribute__((visibility("default"))) void* operator new PARAMS {                         \
    using Fn = void*(*)PARAMS;                                                               \
    HOTLINE_REAL(Fn, MANGLED);                                                               \
    return NewWith(real, AllocKind::KIND, __builtin_return_address(0), HOTLINE_CALLER_FRAME, \
                   __VA_ARGS__);                                                             \
  }
#define HOTLINE_NEW_ARRAY_FORM(MANGLED, KIND, PARAMS, ...)                                   \
  __attribute__((visibility("default"))) void* operator new[] PARAMS {                       \
    using Fn = void*(*)PARAMS;                                                               \
    HOTLINE_REAL(Fn, MANGLED);                                                               \
    return NewWith(real, AllocKind::KIND, __builtin_return_address(0), HOTLINE_CALLER_FRAME, \
                   __VA_ARGS__);                                                             \
  }
#define HOTLINE_DELETE_FORM(OP, MANGLED, KIND, PARAMS, ...)                     \
  __attribute__((visibility("default"))) void OP PARAMS noexcept {              \
    using Fn = void(*) PARAMS;                                                  \
    HOTLINE_REAL(Fn, MANGLED);                                                  \
    DeleteWith(real, FreeKind::KIND, __builtin_return_address(0), __VA_ARGS__); \
  }

HOTLINE_NEW_FORM("_Znwm", kNew, (size_t s), s)
HOTLINE_NEW_ARRAY_FORM("_Znam", kNewArray, (size_t s), s)
HOTLINE_NEW_FORM("_ZnwmRKSt9nothrow_t", kNew, (size_t s, Nothrow t) noexcept, s, t)
HOTLINE_NEW_ARRAY_FORM("_ZnamRKSt9nothrow_t", kNewArray, (size_t s, Nothrow t) noexcept, s, t)
HOTLINE_NEW_FORM("_ZnwmSt11align_val_t", kNew, (size_t s, Align a), s, a)
HOTLINE_NEW_ARRAY_FORM("_ZnamSt11align_val_t", kNewArray, (size_t s, Align a), s, a)
HOTLINE_NEW_FORM("_ZnwmSt11align_val_tRKSt9nothrow_t", kNew,
                 (size_t s, Align a, Nothrow t) noexcept, s, a, t)
HOTLINE_NEW_ARRAY_FORM("_ZnamSt11align_val_tRKSt9nothrow_t", kNewArray,
                       (size_t s, Align a, Nothrow t) noexcept, s, a, t)
HOTLINE_DELETE_FORM(operator delete, "_ZdlPv", kDelete, (void* p), p)
HOTLINE_DELETE_FORM(operator delete[], "_ZdaPv", kDeleteArray, (void* p), p)
HOTLINE_DELETE_FORM(operator delete, "_ZdlPvm", kDelete, (void* p, size_t s), p, s)
HOTLINE_DELETE_FORM(operator delete[], "_ZdaPvm", kDeleteArray, (void* p, size_t s), p, s)
HOTLINE_DELETE_FORM(operator delete, "_ZdlPvRKSt9nothrow_t", kDelete, (void* p, Nothrow t), p, t)
HOTLINE_DELETE_FORM(operator delete[], "_ZdaPvRKSt9nothrow_t", kDeleteArray, (void* p, Nothrow t),
                    p, t)
HOTLINE_DELETE_FORM(operator delete, "_ZdlPvSt11align_val_t", kDelete, (void* p, Align a), p, a)
HOTLINE_DELETE_FORM(operator delete[], "_ZdaPvSt11align_val_t", kDeleteArray, (void* p, Align a), p,
                    a)
HOTLINE_DELETE_FORM(operator delete, "_ZdlPvmSt11align_val_t", kDelete,
                    (void* p, size_t s, Align a), p, s, a)
HOTLINE_DELETE_FORM(operator delete[], "_ZdaPvmSt11align_val_t", kDeleteArray,
                    (void* p, size_t s, Align a), p, s, a)
HOTLINE_DELETE_FORM(operator delete, "_ZdlPvSt11align_val_tRKSt9nothrow_t", kDelete,
                    (void* p, Align a, Nothrow t), p, a, t)
HOTLINE_DELETE_FORM(operator delete[], "_ZdaPvSt11align_val_tRKSt9nothrow_t", kDeleteArray,
                    (void* p, Align a, Nothrow t), p, a, t)

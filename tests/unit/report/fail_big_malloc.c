/* Preloaded into `hotline` by bad_input_test: every malloc of more than 1 MiB fails, as an
   allocation larger than the memory would, so that the tool meets std::bad_alloc on an ordinary
   profile. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

void* malloc(size_t size) {
  static void* (*next)(size_t);
  if (!next) next = (void* (*)(size_t))dlsym(RTLD_NEXT, "malloc");
  return size > ((size_t)1 << 20) ? NULL : next(size);
}

/* hotline's C API for the profiled program: switch profiling on and off, and mark moments.
 *
 * A program may call these whether or not it runs under `hotline record`, and needs no library
 * to link: each call looks up the runtime (libhotline-rt.so, preloaded by `hotline record`) once
 * through dlsym and does nothing when it is absent. Safe from any thread; not from signal
 * handlers.
 *
 *   hotline_stop();            ... set-up you do not want in the profile ...
 *   hotline_start();
 *   hotline_mark("phase 2");   a labelled point in time, shown in reports
 *   hotline_watch(&n, sizeof n, "n");   every write to n, with its value and line
 *   hotline_size(n);           inside a function: this call worked on an input of size n
 */
#ifndef HOTLINE_HOTLINE_H
#define HOTLINE_HOTLINE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* RTLD_DEFAULT */
#endif
#include <dlfcn.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The runtime's entry points, resolved at run time. Not for direct use. */
typedef void (*hotline_rt_void_fn)(void);
typedef void (*hotline_rt_mark_fn)(const char*);

static inline void* hotline__lookup(const char* name) { return dlsym(RTLD_DEFAULT, name); }

/* Resumes sampling (after hotline_stop() or `hotline record --start-paused`). */
static inline void hotline_start(void) {
  static hotline_rt_void_fn fn;
  static int looked;
  if (!looked) {
    fn = (hotline_rt_void_fn)hotline__lookup("hotline_rt_start");
    looked = 1;
  }
  if (fn) fn();
}

/* Pauses sampling: nothing is recorded until hotline_start(). */
static inline void hotline_stop(void) {
  static hotline_rt_void_fn fn;
  static int looked;
  if (!looked) {
    fn = (hotline_rt_void_fn)hotline__lookup("hotline_rt_stop");
    looked = 1;
  }
  if (fn) fn();
}

/* Records a labelled point in time on the calling thread. The label is copied. */
static inline void hotline_mark(const char* label) {
  static hotline_rt_mark_fn fn;
  static int looked;
  if (!looked) {
    fn = (hotline_rt_mark_fn)hotline__lookup("hotline_rt_mark");
    looked = 1;
  }
  if (fn) fn(label);
}

/* Watched objects (docs/watch.md). hotline_watch() sets a hardware watchpoint on `size` bytes
 * (1, 2, 4 or 8, aligned to the size) at `address`, in every thread, until hotline_unwatch()
 * with the same address: every write is recorded with its value (read as a signed integer) and
 * the writing line, under `name` (copied). Call hotline_unwatch() before a stack or heap object
 * ends, or its memory's next owner is watched. At most 4 objects at once (the debug registers),
 * --watch variables included. Returns 0, or -1 when it cannot watch (the profile says why, in
 * a note), or when hotline is absent. */
typedef int (*hotline_rt_watch_fn)(const void*, unsigned long, const char*);
typedef int (*hotline_rt_unwatch_fn)(const void*);

static inline int hotline_watch(const void* address, unsigned long size, const char* name) {
  static hotline_rt_watch_fn fn;
  static int looked;
  if (!looked) {
    fn = (hotline_rt_watch_fn)hotline__lookup("hotline_rt_watch");
    looked = 1;
  }
  return fn ? fn(address, size, name) : -1;
}

static inline int hotline_unwatch(const void* address) {
  static hotline_rt_unwatch_fn fn;
  static int looked;
  if (!looked) {
    fn = (hotline_rt_unwatch_fn)hotline__lookup("hotline_rt_unwatch");
    looked = 1;
  }
  return fn ? fn(address) : -1;
}

/* ---- Complexity (docs/complexity.md) ---- */

typedef void (*hotline_rt_size_fn)(unsigned long long);

/* Tags the call this is called from with its input size n: the innermost function of the
 * calling thread that is being traced. Call it inside the function whose cost depends on n
 * (anywhere between its entry and its return; the last call in one activation counts), in a
 * program built with -finstrument-functions and recorded with `hotline record --trace=timed`:
 * the call's exact duration and n become one point of `hotline report -X`. Elsewhere (not
 * traced, not timed, not under hotline) it does nothing. Never instrumented itself, so it
 * adds no frame of its own. */
__attribute__((no_instrument_function)) static inline void hotline_size(size_t n) {
  static hotline_rt_size_fn fn;
  static int looked;
  if (!looked) {
    fn = (hotline_rt_size_fn)hotline__lookup("hotline_rt_size");
    looked = 1;
  }
  if (fn) fn((unsigned long long)n);
}

#ifdef __cplusplus
}
#endif

#endif /* HOTLINE_HOTLINE_H */

// The module map of the process (executable, shared libraries, vdso), from dl_iterate_phdr.
// Rescanned at start-up and after every dlopen/dlclose; differences become MODULE_LOAD and
// MODULE_UNLOAD records. Call with the session lock held; not for signal handlers.
#pragma once

#include <cstdint>

#include "format/writer.h"

namespace hotline::rt {

// Emits records for modules that appeared or disappeared since the last call.
void RescanModules(format::Writer& writer, uint64_t now);
// Forgets what was emitted (a forked child starts a new file) and emits every module again.
void ReemitModules(format::Writer& writer, uint64_t now);
// This image's executable, read from /proc once (a forked child has the same one).
const char* ExecutablePath();

// Finds where the runtime's own code lies (this library and libunwind). Call once at start-up,
// before anything asks IsRuntimeCode.
void LocateRuntimeImages();
// Whether `address` (a return address) is in the runtime's own code: what such code allocates,
// opens or closes is never the program's. Async-signal-safe.
bool IsRuntimeCode(const void* address);

}  // namespace hotline::rt

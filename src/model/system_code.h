// What is the system's code rather than the program's: the C and C++ standard libraries, their
// headers, and every library installed with the system. Heap sites skip it to reach the
// program's own line, and the annotated listing leaves its files out unless asked.
#pragma once

#include <string_view>

namespace hotline::model {

// A source file of the system: under /usr/include, /usr/lib (GCC's own headers) or
// /usr/local/include.
bool IsSystemSource(std::string_view path);

// A library installed with the system (under /lib, /lib64, /usr/lib, /usr/lib64), or a mapping
// the kernel made ([vdso]).
bool IsSystemModule(std::string_view path);

// libc's start-up chain that calls main: _start, __libc_start_main and its parts.
bool IsStartupFunction(std::string_view name);

}  // namespace hotline::model

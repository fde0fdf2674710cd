// x86-64's address space as Linux lays it out: what a user address can be.
#pragma once

#include <cstdint>

namespace hotline {

// The kernel's half starts here: an instruction pointer at or above it is the kernel's code, and
// a return address there ends a user stack's walk.
inline constexpr uint64_t kKernelSpaceStart = 0xffff800000000000ull;

}  // namespace hotline

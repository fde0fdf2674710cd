// The counters of a clang `-fprofile-instr-generate` run, read from the raw profile the run
// wrote (LLVM's .profraw, version 8 and its neighbours): the values of the binary's
// __llvm_prf_cnts section at exit, in its order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace hotline::coverage {

Expected<std::vector<uint64_t>> ReadProfrawCounters(const std::string& path);

}  // namespace hotline::coverage

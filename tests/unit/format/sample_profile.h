// A small profile with every record kind, written with format::Writer into memory: the input of
// the format tests and the seed of the fuzz corpus.
#pragma once

#include <cstdint>
#include <string>

namespace hotline::testing {

// Writes the sample profile to `path` in `chunks` chunks (at least 1). Returns false on error.
bool WriteSampleProfile(const std::string& path, int chunks);

// A recursion `depth` levels deep as Devel::Hotline records one (the issue 26 perl program:
// `sub f { $_[0] >= N ? 0 : 1 + f($_[0] + 1) }`): named frames `main` at x.pl:5 and `main::f`
// at x.pl:3 (defined at line 2), the stack main → f → f → ..., and one sample of 1000 ns at
// every depth from 1 (main alone) to `depth`, the shallowest first, on thread 7.
bool WriteDeepRecursionProfile(const std::string& path, uint32_t depth);

}  // namespace hotline::testing

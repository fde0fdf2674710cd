// A small profile with every record kind, written with format::Writer into memory: the input of
// the format tests and the seed of the fuzz corpus.
#pragma once

#include <cstdint>
#include <string>

#include "format/byte_buffer.h"
#include "format/schema.h"

namespace hotline::testing {

// A whole file: header (version, minimum reader version) and one records chunk holding
// `payload`, written by hand so that tests can put anything in it.
std::string HandMadeFile(const format::ByteBuffer& payload, uint16_t version = format::kVersion,
                         uint16_t min_reader = format::kMinReaderVersion);

// The 84 bytes of issue 26 (item 13): a header and one chunk of two SAMPLEs of thread 1, the
// first of weight 2 taken in the runtime, the second of weight 2^64 - 1. `report -P` and `html`
// died of std::bad_alloc on it: the weight times the assumed 1 ms period wrapped the total.
std::string Issue26File();

// Writes the sample profile to `path` in `chunks` chunks (at least 1). Returns false on error.
bool WriteSampleProfile(const std::string& path, int chunks);

// A recursion `depth` levels deep as Devel::Hotline records one (the issue 26 perl program:
// `sub f { $_[0] >= N ? 0 : 1 + f($_[0] + 1) }`): named frames `main` at x.pl:5 and `main::f`
// at x.pl:3 (defined at line 2), the stack main → f → f → ..., and one sample of 1000 ns at
// every depth from 1 (main alone) to `depth`, the shallowest first, on thread 7.
bool WriteDeepRecursionProfile(const std::string& path, uint32_t depth);

// regression.c's profile without the machine's noise: named frames `main` and, under it,
// `slow_path` and `other_0` .. `other_29` (regression.c's lines), sampled at 10 kHz on one
// thread. slow_path gets `slow_samples` samples; other_N gets 300 samples moved by up to ±3%
// (a fixed sequence of `seed`), so two profiles of different seeds differ as two runs of the
// same work do, and the test that reads them gets the same counts every time.
// `exe` is the program's path the profile names (`history add` finds the commit from it).
bool WriteRegressionProfile(const std::string& path, uint64_t slow_samples, uint32_t seed,
                            const std::string& exe = "/usr/bin/regression");

}  // namespace hotline::testing

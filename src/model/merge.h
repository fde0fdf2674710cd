// Several runs as one: the profiles of runs of one program added up, matched by symbol rather
// than by address, so that runs of two builds (or of one build loaded at two addresses) meet in
// the same functions and lines. Every sum of the model is a sum of sums, so a merged profile
// keeps the invariants (model/invariants.h), and merging is associative and commutative up to
// the order of the threads, marks and kept samples, which follow the runs' order.
//
// Matching: a module by path and build-id, a file by path, a line by file and number, a
// function by name, definition file and line (by module when its definition is unknown), a call
// edge by its two functions, a stack by its frames' functions and lines. Threads of different
// runs stay apart. Exact counts stay exact only where every run has them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/profile.h"

namespace hotline::model {

// What identifies a function across runs: its name, definition file and line, and, when its
// definition is unknown, its module's file name.
std::string FunctionKey(std::string_view name, std::string_view file, uint32_t line,
                        std::string_view module);
std::string FunctionKey(const Profile& p, const Function& f);

struct MergeOptions {
  bool force = false;  // merge runs of different programs too
};

// The runs of `profiles` as one profile. Fails for runs of different programs (unless forced)
// and for a CPU-time run with an elapsed-time one, whose times do not add up. Warnings (runs
// of different builds) go into the result's warnings.
Expected<Profile> MergeProfiles(const std::vector<const Profile*>& profiles,
                                const MergeOptions& options = {});

}  // namespace hotline::model

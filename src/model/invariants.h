// The invariants every model::Profile must satisfy (DESIGN.md rule 3), as one reusable check:
// the tests run it on every profile they build, hand-made or recorded.
#pragma once

#include "base/status.h"
#include "model/profile.h"

namespace hotline::model {

// Ok, or an error naming the first invariant that fails and the numbers involved:
//   - Σ line time = Σ function self time = Σ file time = Σ module time = Σ thread time = total;
//   - for every function: self + Σ callee time = inclusive, and inclusive ≤ total;
//   - self percentages of all functions add to 100, and within each call-graph section the
//     self row and the child rows add to 100, both within the rounding of two decimals.
Status CheckInvariants(const Profile& profile);

}  // namespace hotline::model

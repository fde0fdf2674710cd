// The stable order of a Profile's tables, shared by building and merging: files by path
// (pseudo-files last, by name), lines by (file, line), every id that points at them following;
// each function's callees by decreasing time; the stacks' times by stack, then thread; the
// function-lines by function, then line.
#pragma once

#include "model/profile.h"

namespace hotline::model {

void PutInOrder(Profile& p);

}  // namespace hotline::model

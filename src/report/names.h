// Names a person can read: C++ functions without their parameter lists (kept only where two
// overloads would otherwise look alike) and with template arguments collapsed
// (`std::vector<…>::push_back`). C names pass through unchanged.
#pragma once

#include <string>
#include <vector>

#include "model/profile.h"

namespace hotline::report {

// `name` with template arguments collapsed to <…>; `keep_parameters` keeps the parameter list.
std::string ShortName(const std::string& name, bool keep_parameters);

// The short name of every function of `profile`, by FunctionId index.
std::vector<std::string> ShortNames(const model::Profile& profile);

}  // namespace hotline::report

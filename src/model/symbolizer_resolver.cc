// Kept apart from build.cc so that code using BuildProfile with another resolver (the tests)
// does not pull in the symbolizer.
#include "model/build.h"

namespace hotline::model {

const symbolize::ResolvedAddress& SymbolizerResolver::resolve(const symbolize::ModuleInfo& module,
                                                              uint64_t address,
                                                              bool is_return_address) {
  return symbolizer_.resolve(module, address, is_return_address);
}

std::vector<std::string> SymbolizerResolver::warnings() const { return symbolizer_.warnings(); }

}  // namespace hotline::model

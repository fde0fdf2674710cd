// An AddressResolver for profiles of named frames only (an interpreter's, made by hand): any
// address it is asked to resolve is a test failure.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/build.h"

namespace hotline::model {

class NoResolver : public AddressResolver {
 public:
  const symbolize::ResolvedAddress& resolve(const symbolize::ModuleInfo&, uint64_t address,
                                            bool) override {
    ADD_FAILURE() << "named frames need no symbolizer, yet " << address << " was resolved";
    return empty_;
  }
  std::vector<std::string> warnings() const override { return {}; }

 private:
  symbolize::ResolvedAddress empty_;
};

}  // namespace hotline::model

// Fuzz target for the profile reader and the model built from what it reads: any bytes at all
// must be read without a crash, a hang or undefined behaviour; every stack the reader accepted
// must walk without faults; and the profile, heap and watches built from the records must hold
// the model's invariants (model::CheckInvariants): a value the reader let through that the model
// cannot add up (issue 26's weight of 2^64 − 1, which wrapped the total and killed `report -P`)
// is found here as a broken invariant.
//
// Nothing is read from disk: addresses resolve through a made-up table (below), named frames
// need no symbolizer.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "format/raw_profile.h"
#include "format/reader.h"
#include "model/build.h"
#include "model/heap.h"
#include "model/invariants.h"
#include "model/stack_tree.h"
#include "model/watch.h"

namespace {

using hotline::symbolize::ResolvedAddress;
using hotline::symbolize::ResolvedFrame;

// Resolves every address the same way each time, from its bits: one of eight functions in one
// of two files, a line from the low bits, and an inlined callee for odd addresses. Some
// addresses resolve to nothing (a module without symbols), some to a frame without a name.
class MadeUpResolver : public hotline::model::AddressResolver {
 public:
  const ResolvedAddress& resolve(const hotline::symbolize::ModuleInfo& module, uint64_t address,
                                 bool is_return_address) override {
    uint64_t key = is_return_address ? address - 1 : address;
    result_ = ResolvedAddress{};
    result_.module = module.path;
    result_.module_address = key - module.bias;
    if ((key >> 4) % 7 == 6) return result_;  // no symbols here
    auto frame = [&](uint64_t which) {
      ResolvedFrame f;
      f.function = (which % 11 == 10) ? "" : "f" + std::to_string(which % 8);
      f.file = which % 2 ? "a.c" : "b.c";
      f.line = uint32_t(key & 0xff);
      f.decl_file = f.file;
      f.decl_line = uint32_t(which % 8);
      f.source = hotline::symbolize::FrameSource::kDwarf;
      return f;
    };
    if (key & 1) result_.frames.push_back(frame(key >> 8));  // inlined, innermost first
    result_.frames.push_back(frame(key >> 4));
    return result_;
  }
  std::vector<std::string> warnings() const override { return {}; }

 private:
  ResolvedAddress result_;
};

void Check(const hotline::Status& invariants, const char* what) {
  if (invariants.ok()) return;
  std::fprintf(stderr, "%s: %s\n", what, invariants.message().c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hotline::format::RawProfile profile;
  hotline::format::ReadStats stats;
  hotline::Status status = hotline::format::ReadProfileBytes(data, size, "fuzz", profile, &stats);
  if (!status.ok()) return 0;
  for (const auto& sample : profile.samples) {
    bool broken = false;
    for (uint64_t address : profile.stack(sample.node, &broken))
      profile.moduleAt(address, sample.time);
  }
  (void)stats.summary();

  MadeUpResolver resolver;
  hotline::model::BuildOptions options;
  options.keep_samples = options.keep_calls = true;
  hotline::Expected<hotline::model::Profile> built =
      hotline::model::BuildProfile(profile, resolver, options);
  if (built.ok()) {
    Check(hotline::model::CheckInvariants(*built), "profile");
    for (auto order : {hotline::model::StackOrder::kCallersFirst,
                       hotline::model::StackOrder::kCalleesFirst})
      (void)hotline::model::BuildStackTree(*built, order);
    (void)hotline::model::HottestLines(*built);
  }
  (void)hotline::model::BuildHeapProfile(profile, resolver);
  (void)hotline::model::BuildWatchProfile(profile, resolver);
  return 0;
}

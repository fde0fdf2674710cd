// Builds a model::Profile from the records of a .hotline file: symbolizes every distinct stack
// once, runs the call-graph accumulation, and fills every table of the Profile.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/address_space.h"
#include "base/status.h"
#include "format/raw_profile.h"
#include "format/reader.h"
#include "model/profile.h"
#include "symbolize/symbolizer.h"

namespace hotline::model {

// Where BuildProfile gets its frames from: the symbolizer in the tool, a table in tests.
// resolve() has the contract of symbolize::Symbolizer::resolve.
class AddressResolver {
 public:
  virtual ~AddressResolver() = default;
  virtual const symbolize::ResolvedAddress& resolve(const symbolize::ModuleInfo& module,
                                                    uint64_t address, bool is_return_address) = 0;
  // One line per problem met so far.
  virtual std::vector<std::string> warnings() const = 0;
};

// The symbolizer as an AddressResolver. Keeps a reference: `symbolizer` must outlive it.
class SymbolizerResolver : public AddressResolver {
 public:
  explicit SymbolizerResolver(symbolize::Symbolizer& symbolizer) : symbolizer_(symbolizer) {}
  const symbolize::ResolvedAddress& resolve(const symbolize::ModuleInfo& module, uint64_t address,
                                            bool is_return_address) override;
  std::vector<std::string> warnings() const override;

 private:
  symbolize::Symbolizer& symbolizer_;
};

struct BuildOptions {
  // Keep every sample with its stack changes, for the raw views (-R, -s). Costs memory.
  bool keep_samples = false;
  // Keep every call of a timed trace (Profile::calls), for timelines. Costs memory: one entry
  // per call.
  bool keep_calls = false;
  // Build the profile of this thread only (its samples and its thread entry).
  std::optional<uint64_t> thread;
};

// The sampling period assumed when the process record (which holds it) was lost.
inline constexpr uint64_t kAssumedPeriodNs = format::kAssumedPeriodNs;

// Builds the profile of `raw`. Fails only when the profile is too large for 32-bit ids.
Expected<Profile> BuildProfile(const format::RawProfile& raw, AddressResolver& resolver,
                               const BuildOptions& options = {});

// Reads the file at `path` and builds its profile without keeping the samples in memory (a
// SAMPLE is aggregated as it is read: the format writes the records it refers to before it).
// A file of several runs (hotline merge) gives their sum (model/merge.h).
// `stats` receives what the reader saw, including damage. Fails like format::ReadProfileFile.
Expected<Profile> LoadProfile(const std::string& path, AddressResolver& resolver,
                              const BuildOptions& options, format::ReadStats* stats);

// Each run of the file at `path` on its own: one, or each of those `hotline merge` put together
// (what `hotline diff` compares run by run).
Expected<std::vector<Profile>> LoadRuns(const std::string& path, AddressResolver& resolver,
                                        const BuildOptions& options, format::ReadStats* stats);

// The reading LoadProfile does, as a visitor that other readings of one run derive from to build
// more in the same pass (model::LoadHeapProfile builds the heap beside): keeps what resolves
// stacks, aggregates each SAMPLE as it comes and keeps neither samples nor heap events. With no
// options it builds no profile and passes the samples over.
class ProfileStream : public format::RawProfile {
 public:
  ProfileStream(AddressResolver& resolver, std::optional<BuildOptions> options);
  ~ProfileStream() override;
  void onSample(const format::SampleRecord& r) override;
  // Whether a profile is being built.
  bool buildsProfile() const { return builder_ != nullptr; }
  // After the reading, once, when buildsProfile(): the run's profile, as LoadProfile gives it.
  Expected<Profile> finishProfile();

 private:
  class Builder;
  std::unique_ptr<Builder> builder_;
};

}  // namespace hotline::model

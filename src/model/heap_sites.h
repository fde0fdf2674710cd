// SiteTable: the stacks of a heap profile's allocations, symbolized, and the sites they are grouped
// into, with each site's top caller chains. Internal to src/model (heap_replay.cc).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "format/raw_profile.h"
#include "model/build.h"
#include "model/heap.h"

namespace hotline::model {

// The stacks and sites of the allocations, by stack node.
class SiteTable {
 public:
  SiteTable(const format::RawProfile& raw, AddressResolver& resolver, const HeapOptions& options)
      : raw_(raw), resolver_(resolver), options_(options) {}

  struct Node {
    uint32_t stack;  // into stacks()
    uint32_t site;   // into sites()
  };

  const Node& of(uint64_t node, uint64_t time);

  // Each site's top caller chains, from the stacks' totals.
  void addChains();

  std::vector<std::string> stackText(uint32_t stack) const;

  std::vector<HeapSite>& sites() { return sites_; }
  std::vector<HeapStack>& stacks() { return stacks_; }

 private:
  // The frames of one return address, innermost first (inlined functions each a frame).
  const std::vector<HeapFrame>& describe(uint64_t address, uint64_t time);

  const format::RawProfile& raw_;
  AddressResolver& resolver_;
  const HeapOptions& options_;
  std::vector<HeapSite> sites_;
  std::vector<HeapStack> stacks_;
  std::vector<uint32_t> site_frame_;  // by stack: the index of its site's frame
  std::unordered_map<uint64_t, Node> nodes_;
  std::unordered_map<uint64_t, std::vector<HeapFrame>> frames_;  // by return address
  std::map<std::tuple<std::string, std::string, uint32_t, std::string>, uint32_t> by_place_;
};

}  // namespace hotline::model

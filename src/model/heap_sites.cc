// The sites of a heap profile: each allocation's stack symbolized once per stack node, the first
// frame of the program's own code taken as its site, and each site's top caller chains.
#include "model/heap_sites.h"

#include <algorithm>
#include <utility>

#include "model/system_code.h"

namespace hotline::model {
namespace {

std::string FrameText(const HeapFrame& f) {
  return f.file.empty() ? f.function
                        : f.function + " (" + f.file + ":" + std::to_string(f.line) + ")";
}

}  // namespace

const SiteTable::Node& SiteTable::of(uint64_t node, uint64_t time) {
  auto found = nodes_.find(node);
  if (found != nodes_.end()) return found->second;
  HeapStack stack;
  for (uint64_t address : raw_.stack(node)) {
    const std::vector<HeapFrame>& frames = describe(address, time);
    stack.frames.insert(stack.frames.end(), frames.begin(), frames.end());
  }
  if (stack.frames.empty()) stack.frames.push_back(HeapFrame{"[unknown]", "", 0, 0, false, "", 0});
  // The site: the first frame of the program's own code; the one inside it, the library
  // function it called.
  size_t at = 0;
  if (!options_.allocator_frames) {
    while (at < stack.frames.size() && stack.frames[at].system) ++at;
    if (at == stack.frames.size()) at = 0;  // all the system's: the allocator's caller
  }
  const HeapFrame& f = stack.frames[at];
  HeapSite site;
  site.function = f.function;
  site.file = f.file;
  site.line = f.line;
  site.via = at > 0 ? stack.frames[at - 1].function : "";
  auto key = std::make_tuple(site.function, site.file, site.line, site.via);
  auto [it, added] = by_place_.try_emplace(key, static_cast<uint32_t>(sites_.size()));
  if (added) sites_.push_back(std::move(site));
  site_frame_.push_back(static_cast<uint32_t>(at));
  stacks_.push_back(std::move(stack));
  return nodes_.emplace(node, Node{static_cast<uint32_t>(stacks_.size() - 1), it->second})
      .first->second;
}

void SiteTable::addChains() {
  std::vector<std::map<std::vector<std::string>, HeapChain>> chains(sites_.size());
  for (const auto& [node, n] : nodes_) {
    const HeapStack& stack = stacks_[n.stack];
    if (stack.calls == 0) continue;
    std::vector<std::string> callers;
    // libc's start-up chain above main says nothing about where the program allocates.
    for (size_t i = site_frame_[n.stack] + 1;
         i < stack.frames.size() && callers.size() < options_.chain_depth &&
         !IsStartupFunction(stack.frames[i].function);
         ++i)
      callers.push_back(FrameText(stack.frames[i]));
    if (callers.empty()) continue;
    HeapChain& chain = chains[n.site][callers];
    chain.frames = callers;
    chain.calls += stack.calls;
    chain.bytes += stack.bytes;
  }
  for (size_t s = 0; s < sites_.size(); ++s) {
    for (auto& [frames, chain] : chains[s]) sites_[s].chains.push_back(std::move(chain));
    auto& list = sites_[s].chains;
    std::sort(list.begin(), list.end(), [](const HeapChain& a, const HeapChain& b) {
      return a.bytes != b.bytes ? a.bytes > b.bytes : a.frames < b.frames;
    });
    if (list.size() > options_.chains) list.resize(options_.chains);
  }
}

std::vector<std::string> SiteTable::stackText(uint32_t stack) const {
  std::vector<std::string> lines;
  for (const HeapFrame& f : stacks_[stack].frames) lines.push_back(FrameText(f));
  return lines;
}

const std::vector<HeapFrame>& SiteTable::describe(uint64_t address, uint64_t time) {
  auto found = frames_.find(address);
  if (found != frames_.end()) return found->second;
  std::vector<HeapFrame> frames;
  const format::RawModule* module = address ? raw_.moduleAt(address, time) : nullptr;
  if (!module) {
    frames.push_back(HeapFrame{"[unknown]", "", 0, address, false, "", 0});
  } else {
    bool system_module = IsSystemModule(module->path);
    symbolize::ModuleInfo info{module->path, module->build_id, module->bias};
    const symbolize::ResolvedAddress& r = resolver_.resolve(info, address, true);
    for (const symbolize::ResolvedFrame& f : r.frames) {
      bool system =
          f.file.empty() || !f.file.starts_with('/') ? system_module : IsSystemSource(f.file);
      frames.push_back(HeapFrame{f.function.empty() ? "[unknown]" : f.function, f.file, f.line,
                                 address, system, f.decl_file, f.decl_line});
    }
    if (frames.empty())
      frames.push_back(HeapFrame{"[" + module->path.substr(module->path.rfind('/') + 1) + "]", "",
                                 0, address, system_module, "", 0});
  }
  return frames_.emplace(address, std::move(frames)).first->second;
}

}  // namespace hotline::model

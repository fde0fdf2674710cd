// Strong ids for the entities of a model::Profile. Each id is an index into one table of the
// Profile it came from; ids of different kinds do not convert into each other, so a FileId can
// never index the function table by mistake.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>

namespace hotline::model {

template <typename Tag>
class Id {
 public:
  static constexpr uint32_t kInvalid = std::numeric_limits<uint32_t>::max();

  constexpr Id() = default;
  constexpr explicit Id(uint32_t index) : index_(index) {}
  constexpr explicit Id(size_t index) : index_(static_cast<uint32_t>(index)) {}

  constexpr uint32_t index() const { return index_; }
  constexpr bool valid() const { return index_ != kInvalid; }
  constexpr auto operator<=>(const Id&) const = default;

 private:
  uint32_t index_ = kInvalid;
};

using FunctionId = Id<struct FunctionTag>;
using FileId = Id<struct FileTag>;
using LineId = Id<struct LineTag>;
using ModuleId = Id<struct ModuleTag>;
using ThreadId = Id<struct ThreadTag>;
using EdgeId = Id<struct EdgeTag>;
using StackId = Id<struct StackTag>;
using FrameId = Id<struct FrameTag>;  // a frame of the sampled stacks: Profile::stack_frames

}  // namespace hotline::model

template <typename Tag>
struct std::hash<hotline::model::Id<Tag>> {
  size_t operator()(hotline::model::Id<Tag> id) const noexcept {
    return std::hash<uint32_t>()(id.index());
  }
};

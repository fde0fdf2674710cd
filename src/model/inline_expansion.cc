// An address expanded into the frames it stands for: the inline chain the symbolizer finds, a
// named frame of an interpreter, or one pseudo-function ([kernel], [unknown], [profiler], a
// module without symbols), each expanded once per address and kind (return or not).
#include <algorithm>
#include <string>

#include "format/schema.h"
#include "model/profile_builder.h"
#include "model/system_code.h"

namespace hotline::model {

ProfileBuilder::Frames ProfileBuilder::single(FunctionId fn, uint64_t address) {
  Frames frames;
  frames.offset = static_cast<uint32_t>(arena_.size());
  frames.count = 1;
  arena_.push_back(fn);
  const Function& f = profile_.functions[fn.index()];
  frames.line = line(f.file, 0);
  frames.module = f.module;
  frame_info_.push_back(FrameInfo{frames.line, address});
  return frames;
}

uint32_t ProfileBuilder::epochAt(const format::RawProfile& raw, uint64_t time) {
  if (!reuse_times_) {
    reuse_times_.emplace();
    for (const format::RawModule& later : raw.modules)
      for (const format::RawModule& earlier : raw.modules) {
        bool overlap =
            later.start < earlier.start + earlier.size && earlier.start < later.start + later.size;
        if (overlap && earlier.load_time < later.load_time &&
            (earlier.path != later.path || earlier.bias != later.bias)) {
          reuse_times_->push_back(later.load_time);
          break;
        }
      }
    std::sort(reuse_times_->begin(), reuse_times_->end());
    reuse_times_->erase(std::unique(reuse_times_->begin(), reuse_times_->end()),
                        reuse_times_->end());
  }
  if (reuse_times_->empty()) return 0;
  return uint32_t(std::upper_bound(reuse_times_->begin(), reuse_times_->end(), time) -
                  reuse_times_->begin());
}

const ProfileBuilder::Frames& ProfileBuilder::expand(const format::RawProfile& raw,
                                                     uint64_t address, bool is_return,
                                                     uint64_t time) {
  uint32_t epoch = epochAt(raw, time);
  auto& cache =
      epoch == 0 ? (is_return ? caller_frames_ : leaf_frames_) : later_frames_[{epoch, is_return}];
  auto found = cache.find(address);
  if (found != cache.end()) return found->second;

  Frames frames;
  if (format::IsNamedFrame(address)) {
    frames = named(raw, address);
  } else if (address >= kKernelSpaceStart) {
    frames = single(pseudoFunction(PseudoKind::kKernel, "[kernel]",
                                   pseudoModule(PseudoKind::kKernel, "[kernel]")),
                    address);
  } else if (const format::RawModule* raw_module = raw.moduleAt(address, time); !raw_module) {
    frames = single(pseudoFunction(PseudoKind::kUnknown, "[unknown]",
                                   pseudoModule(PseudoKind::kUnknown, "[unknown]")),
                    address);
  } else if (IsRuntimeModule(raw_module->path)) {
    // hotline's own code (the tracing hooks, the heap shims): the profiler's time, under the
    // function that called into it.
    frames = single(pseudoFunction(PseudoKind::kProfiler, "[profiler]",
                                   pseudoModule(PseudoKind::kProfiler, "[profiler]")),
                    address);
  } else {
    ModuleId mod = module(*raw_module);
    symbolize::ModuleInfo info{raw_module->path, raw_module->build_id, raw_module->bias};
    const symbolize::ResolvedAddress& resolved = resolver_.resolve(info, address, is_return);
    // Kernel-made mappings are already bracketed: `[vdso]`, not `[[vdso]]`.
    const std::string& module_name = profile_.modules[mod.index()].name;
    const std::string module_label =
        module_name.starts_with('[') ? module_name : "[" + module_name + "]";
    if (resolved.frames.empty() || resolved.frames.back().function.empty()) {
      frames = single(pseudoFunction(PseudoKind::kModule, module_label, mod), address);
    } else {
      auto line_of = [&](const symbolize::ResolvedFrame& f) {
        return f.file.empty() ? line(file(module_label, PseudoKind::kModule), 0)
                              : line(file(f.file, PseudoKind::kNone), f.line);
      };
      frames.offset = static_cast<uint32_t>(arena_.size());
      // The symbolizer lists the inline chain innermost first; stacks go outermost first. An
      // inlined level without a name cannot be told apart from its caller: it is left out.
      // In a library of the system the chain is the library's business: its time is the
      // out-of-line function's (sin's body is __sin_fma, not the rounding-mode helper inlined
      // into it), at that function's own line, as perf and gprof name it.
      const bool whole_chain = !IsSystemModule(raw_module->path);
      for (auto it = resolved.frames.rbegin(); it != resolved.frames.rend(); ++it) {
        if (it->function.empty()) continue;
        arena_.push_back(function(it->function, it->decl_file, it->decl_line, mod));
        frame_info_.push_back(FrameInfo{line_of(*it), address});
        if (!whole_chain) break;
      }
      frames.count = static_cast<uint32_t>(arena_.size() - frames.offset);
      frames.line = whole_chain || frames.count == 0 ? line_of(resolved.frames.front())
                                                     : frame_info_.back().line;
      frames.module = mod;
    }
  }
  return cache.emplace(address, frames).first->second;
}

ProfileBuilder::Frames ProfileBuilder::named(const format::RawProfile& raw, uint64_t address) {
  auto found = raw.frames.find(format::NamedFrameId(address));
  if (found == raw.frames.end())
    return single(pseudoFunction(PseudoKind::kUnknown, "[unknown]",
                                 pseudoModule(PseudoKind::kUnknown, "[unknown]")),
                  address);
  const format::RawFrame& f = found->second;
  profile_.summary.interpreted = true;
  // The frame's module is a name ("perl", a .pm's path), not a mapped file: no symbols to read.
  format::RawModule named_module;
  named_module.path = f.module.empty() ? "[interpreted]" : f.module;
  ModuleId mod = module(named_module);
  Frames frames;
  frames.offset = static_cast<uint32_t>(arena_.size());
  frames.count = 1;
  frames.module = mod;
  frames.line = f.file.empty() ? line(file("[" + f.name + "]", PseudoKind::kModule), 0)
                               : line(file(f.file, PseudoKind::kNone), uint32_t(f.line));
  arena_.push_back(function(f.name, f.def_file, uint32_t(f.def_line), mod));
  if (f.file.empty()) fileless_lines_.emplace_back(frames.line, arena_.back());
  frame_info_.push_back(FrameInfo{frames.line, 0});
  return frames;
}

}  // namespace hotline::model

// Addresses → module, function (demangled, with its inline chain), source file and line, read
// with elfutils libdw. Every distinct (module, address) is resolved once and cached.
// Not thread-safe: one Symbolizer per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace hotline::symbolize {

// Where the answer for a frame came from.
enum class FrameSource { kNone, kSymbolTable, kDwarf, kInline };

// One function level at an address. For an address inside code that was inlined, there is one
// ResolvedFrame for each inlined function, innermost first, and the last one is the real
// (out-of-line) function that contains the address.
struct ResolvedFrame {
  std::string function;   // demangled name; empty when unknown
  std::string file;       // source file of this address in this function ("" if unknown)
  uint32_t line = 0;      // 0 if unknown
  std::string decl_file;  // where the function is defined
  uint32_t decl_line = 0;
  FrameSource source = FrameSource::kNone;
};

struct ResolvedAddress {
  std::string module;                 // the module's path as recorded
  uint64_t module_address = 0;        // the address as an ELF virtual address in the module
  std::vector<ResolvedFrame> frames;  // innermost first; empty when nothing is known
};

// A module as the profile recorded it.
struct ModuleInfo {
  std::string path;
  std::string build_id;  // raw bytes, may be empty
  uint64_t bias = 0;     // runtime address − ELF virtual address
};

struct SymbolizerOptions {
  std::vector<std::string> debug_dirs = {"/usr/lib/debug"};
};

class Symbolizer {
 public:
  explicit Symbolizer(SymbolizerOptions options = {});
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // Resolves `address` (a runtime address inside `module`). For return addresses pass
  // is_return_address = true: the lookup then uses address − 1, the call instruction.
  // Never fails: what cannot be resolved yields frames = {} (the caller names it
  // `module+0xOFFSET`). The reference stays valid for the Symbolizer's lifetime.
  const ResolvedAddress& resolve(const ModuleInfo& module, uint64_t address,
                                 bool is_return_address);

  // One line per problem met so far (a module not found, build-id mismatch, no debug info),
  // each said once.
  const std::vector<std::string>& warnings() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hotline::symbolize

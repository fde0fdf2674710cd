// What the format's MODULE_LOAD needs to know of an ELF image loaded in this process, read from
// dl_iterate_phdr's answer. Shared by the runtime and the front-ends that write native frames.
// Allocates nothing: safe in the runtime.
#pragma once

#include <link.h>

#include <cstdint>

namespace hotline::base {

struct LoadedImage {
  uint64_t bias = 0;         // dlpi_addr: load address minus link-time address
  uint64_t start = 0;        // the lowest PT_LOAD address in memory
  uint64_t size = 0;         // up to the end of the highest PT_LOAD segment
  uint64_t file_offset = 0;  // the first PT_LOAD segment's offset in the file
  uint8_t build_id[64] = {};
  uint32_t build_id_size = 0;
};

// Fills `image` from one dl_iterate_phdr entry; size 0 when it has no PT_LOAD segment.
void DescribeLoadedImage(const dl_phdr_info* info, LoadedImage* image);

}  // namespace hotline::base

#include "base/loaded_image.h"

#include <elf.h>

#include <cstring>

namespace hotline::base {
namespace {

void ReadBuildId(const dl_phdr_info* info, LoadedImage* image) {
  image->build_id_size = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    auto* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
    const uint8_t* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
      size_t name_size = (note->n_namesz + 3) & ~3u;
      size_t desc_size = (note->n_descsz + 3) & ~3u;
      const uint8_t* name = p + sizeof(ElfW(Nhdr));
      const uint8_t* desc = name + name_size;
      if (desc + desc_size > end) break;
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0 && note->n_descsz <= sizeof image->build_id) {
        std::memcpy(image->build_id, desc, note->n_descsz);
        image->build_id_size = note->n_descsz;
        return;
      }
      p = desc + desc_size;
    }
  }
}

}  // namespace

void DescribeLoadedImage(const dl_phdr_info* info, LoadedImage* image) {
  uint64_t low = UINT64_MAX, high = 0;
  image->file_offset = 0;
  bool first = true;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    if (first) image->file_offset = ph.p_offset;
    first = false;
    if (ph.p_vaddr < low) low = ph.p_vaddr;
    if (ph.p_vaddr + ph.p_memsz > high) high = ph.p_vaddr + ph.p_memsz;
  }
  image->bias = info->dlpi_addr;
  image->start = low == UINT64_MAX ? 0 : info->dlpi_addr + low;
  image->size = high > low ? high - low : 0;
  ReadBuildId(info, image);
}

}  // namespace hotline::base

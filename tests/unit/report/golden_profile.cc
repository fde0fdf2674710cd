#include "golden_profile.h"

#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

#include "format/schema.h"
#include "format/writer.h"
#include "golden_target.h"

namespace hotline::testing {

namespace {

struct ExeRange {
  uint64_t bias = 0, start = UINT64_MAX, end = 0;
};

int FindExe(struct dl_phdr_info* info, size_t, void* data) {
  // The first object is the executable itself.
  auto* range = static_cast<ExeRange*>(data);
  range->bias = info->dlpi_addr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    range->start = std::min<uint64_t>(range->start, info->dlpi_addr + ph.p_vaddr);
    range->end = std::max<uint64_t>(range->end, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  return 1;
}

uint64_t Site(int i) { return reinterpret_cast<uint64_t>(golden_sites[i]); }

}  // namespace

bool WriteGoldenProfile(const std::string& path, std::string* error, const std::string& build_id) {
  golden_main();  // fills golden_sites
  ExeRange exe;
  dl_iterate_phdr(FindExe, &exe);
  char exe_path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
  if (n <= 0) {
    *error = "cannot read /proc/self/exe";
    return false;
  }
  exe_path[n] = '\0';

  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    *error = "cannot create " + path;
    return false;
  }
  format::Writer w;
  w.begin(fd, format::kFeatureSamples);
  uint64_t t = 1'000'000'000;  // CLOCK_MONOTONIC of the start; samples follow 1 ms apart

  format::ProcessRecord process;
  process.pid = 4242;
  process.time = t;
  process.exe = w.internString("golden");
  uint64_t argv[1] = {process.exe};
  process.argc = 1;
  process.argv = argv;
  process.clock = format::ClockMode::kCpu;
  process.sampler = format::Sampler::kPerfTaskClock;
  process.period_ns = 1'000'000;
  process.max_depth = 64;
  w.add(process);

  format::ModuleLoadRecord module;
  module.time = t;
  module.id = 1;
  module.path = w.internString(exe_path);
  module.bias = exe.bias;
  module.start = exe.start;
  module.size = exe.end - exe.start;
  module.build_id = reinterpret_cast<const uint8_t*>(build_id.data());
  module.build_id_size = build_id.size();
  w.add(module);

  w.add(format::ThreadStartRecord{t, 100, w.internString("main"), format::kThreadPreexisting});
  w.add(format::ThreadStartRecord{t, 101, w.internString("worker"), 0});

  auto stack = [&](std::vector<uint64_t> outermost_first) {
    uint64_t node = 0;
    for (uint64_t address : outermost_first) node = w.internStackNode(node, address);
    return node;
  };
  auto sample = [&](uint64_t tid, std::vector<uint64_t> frames, int times, uint64_t weight = 1,
                    uint64_t flags = 0) {
    uint64_t node = stack(frames);
    for (int i = 0; i < times; ++i) {
      t += 1'000'000 * weight;
      w.add(format::SampleRecord{t, tid, node, weight, flags});
    }
  };

  const uint64_t main_self = Site(SITE_MAIN_SELF), main_middle = Site(SITE_MAIN_CALL_MIDDLE),
                 main_recurse = Site(SITE_MAIN_CALL_RECURSE), middle_self = Site(SITE_MIDDLE_SELF),
                 middle_call = Site(SITE_MIDDLE_CALL), leaf_a = Site(SITE_LEAF_A),
                 leaf_b = Site(SITE_LEAF_B), recurse_call = Site(SITE_RECURSE_CALL),
                 recurse_self = Site(SITE_RECURSE_SELF);

  sample(100, {main_self}, 2);
  sample(100, {main_middle, middle_self}, 3);
  sample(100, {main_middle, middle_call, leaf_a}, 5);
  sample(100, {main_middle, middle_call, leaf_b}, 3);
  sample(100, {main_middle, middle_call, leaf_b}, 1, 2);  // an overrun: two periods
  w.add(format::MarkRecord{t, 100, w.internString("phase two")});
  w.flush();
  sample(100, {main_recurse, recurse_self}, 2);
  sample(100, {main_recurse, recurse_call, recurse_self}, 2);
  sample(100, {main_recurse, recurse_call, recurse_call, recurse_self}, 3);
  sample(100, {main_recurse, recurse_call, recurse_self}, 1);
  sample(100, {main_self}, 1);
  w.flush();
  sample(101, {main_middle, middle_call, leaf_a}, 3);
  sample(101, {0x10}, 1);                                           // in no module: [unknown]
  sample(101, {main_middle, 0xffffffff81000000ull}, 1);             // kernel space: [kernel]
  sample(101, {middle_call, leaf_b}, 2, 1, format::kSampleBroken);  // outer frames lost
  sample(101, {main_middle, middle_self}, 1, 1, format::kSampleInRuntime);  // [profiler]
  // 0.4 ms of CPU time beyond its 8 samples: [unsampled], below the warning's 5%.
  w.add(format::ThreadEndRecord{t, 101, 8'400'000});
  w.add(format::EndRecord{t, format::EndHow::kExit, 0});
  w.flush();
  bool ok = !w.failed();
  if (!ok) *error = w.error();
  close(fd);
  return ok;
}

}  // namespace hotline::testing

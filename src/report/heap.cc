#include "report/heap.h"

#include <fmt/core.h>

#include <algorithm>

#include "report/text.h"

namespace hotline::report {
namespace {

std::string Bytes(uint64_t bytes) {
  if (bytes >= (1ull << 30)) return fmt::format("{:.2f} GiB", double(bytes) / double(1ull << 30));
  if (bytes >= (1ull << 20)) return fmt::format("{:.2f} MiB", double(bytes) / double(1ull << 20));
  if (bytes >= 1024) return fmt::format("{:.2f} KiB", double(bytes) / 1024);
  return fmt::format("{} B", bytes);
}

std::string SiteName(const model::HeapSite& s) {
  if (s.file.empty()) return s.function;
  return fmt::format("{} ({}:{})", s.function, s.file, s.line);
}

void Percent(std::string& out, uint64_t part, uint64_t whole) {
  out += FormatPercent(whole ? 100.0 * double(part) / double(whole) : 0.0);
}

// The first `limit` sites by `key`, leaving out those at zero. Every site table has the same
// columns; only the order differs.
template <typename Key>
void SiteTable(const model::HeapProfile& heap, const char* title, Key key, uint32_t limit,
               std::string& out) {
  std::vector<const model::HeapSite*> sites;
  for (const auto& s : heap.sites)
    if (key(s) > 0) sites.push_back(&s);
  std::sort(sites.begin(), sites.end(), [&](const auto* a, const auto* b) {
    if (key(*a) != key(*b)) return key(*a) > key(*b);
    return SiteName(*a) < SiteName(*b);
  });
  if (sites.size() > limit) sites.resize(limit);
  out += fmt::format("\n{}\nbytes\tcalls\tat peak\ttemporary\tleaked\tsite\n", title);
  for (const auto* s : sites)
    out += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\n", Bytes(s->bytes), s->calls, Bytes(s->peak_bytes),
                       s->temporary_calls, Bytes(s->leaked_bytes), SiteName(*s));
}

}  // namespace

void PrintHeap(const model::HeapProfile& heap, const ReportOptions& options, std::string& out) {
  if (options.machine) {
    out += fmt::format(
        "peak_bytes\t{}\ntotal_bytes\t{}\nalloc_calls\t{}\nfree_calls\t{}\n"
        "temporary_calls\t{}\nleaked_bytes\t{}\nleaked_calls\t{}\n",
        heap.peak_bytes, heap.total_bytes, heap.alloc_calls, heap.free_calls, heap.temporary_calls,
        heap.leaked_bytes, heap.leaked_calls);
    return;
  }
  if (!out.empty()) out += "\n";
  out += "Heap\n";
  out += fmt::format("peak\t{}\tat {}\n", Bytes(heap.peak_bytes),
                     FormatTime(heap.peak_time_ns, false));
  out += fmt::format("total allocated\t{}\n", Bytes(heap.total_bytes));
  out += fmt::format("allocation calls\t{}\n", heap.alloc_calls);
  out += fmt::format("free calls\t{}\n", heap.free_calls);
  out += fmt::format("temporary allocations\t{}\t", heap.temporary_calls);
  Percent(out, heap.temporary_calls, heap.alloc_calls);
  out += "% of calls\n";
  out += fmt::format("leaked\t{}\tin {} blocks\n", Bytes(heap.leaked_bytes), heap.leaked_calls);
  if (heap.mmap_calls)
    out += fmt::format("anonymous mmap\t{}\tin {} calls, {} munmap, {} still mapped\n",
                       Bytes(heap.mmap_bytes), heap.mmap_calls, heap.munmap_calls,
                       Bytes(heap.mmap_leaked_bytes));
  if (heap.unknown_frees)
    out += fmt::format("releases of blocks allocated before recording\t{}\n", heap.unknown_frees);

  uint32_t limit = options.top_count;
  SiteTable(
      heap, "Allocation sites by bytes", [](const model::HeapSite& s) { return s.bytes; }, limit,
      out);
  SiteTable(
      heap, "Allocation sites by calls", [](const model::HeapSite& s) { return s.calls; }, limit,
      out);
  SiteTable(
      heap, "Allocation sites by peak contribution",
      [](const model::HeapSite& s) { return s.peak_bytes; }, limit, out);

  out += "\nLeaks\nbytes\tblocks\tstack\n";
  size_t shown = 0;
  for (const auto& leak : heap.leaks) {
    if (shown++ == limit) break;
    out += fmt::format("{}\t{}\t{}\n", Bytes(leak.bytes), leak.calls,
                       leak.stack.empty() ? "[unknown]" : leak.stack.front());
    for (size_t i = 1; i < leak.stack.size(); ++i) out += fmt::format("\t\t  {}\n", leak.stack[i]);
  }

  out += "\nAllocation sizes\nsize\tcalls\tpercent\t(one # is 2%)\n";
  for (const auto& [size_class, calls] : heap.size_histogram) {
    double percent = heap.alloc_calls ? 100.0 * double(calls) / double(heap.alloc_calls) : 0;
    std::string bar(size_t(percent / 2), '#');
    if (bar.empty()) bar = "!";
    std::string range =
        size_class == 0 ? "0" : fmt::format("{}-{}", size_class, size_class * 2 - 1);
    out += fmt::format("{}\t{}\t{}\t{}\n", range, calls, FormatPercent(percent), bar);
  }
}

}  // namespace hotline::report

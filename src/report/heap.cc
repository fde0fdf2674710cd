#include "report/heap.h"

#include <fmt/core.h>

#include <algorithm>

#include "report/names.h"
#include "report/text.h"

namespace hotline::report {
namespace {

std::string Bytes(uint64_t bytes) {
  if (bytes >= (1ull << 30)) return fmt::format("{:.2f} GiB", double(bytes) / double(1ull << 30));
  if (bytes >= (1ull << 20)) return fmt::format("{:.2f} MiB", double(bytes) / double(1ull << 20));
  if (bytes >= 1024) return fmt::format("{:.2f} KiB", double(bytes) / 1024);
  return fmt::format("{} B", bytes);
}

// A name as the options want it: short unless --full-names.
std::string Name(const std::string& name, const ReportOptions& options) {
  return options.full_names ? name : ShortName(name, false);
}

// "std::vector<…>::push_back from analytics::crunch (app.cc:41)".
std::string SiteName(const model::HeapSite& s, const ReportOptions& options) {
  std::string name = Name(s.function, options);
  if (!s.file.empty()) name += fmt::format(" ({}:{})", s.file, s.line);
  return s.via.empty() ? name : Name(s.via, options) + " from " + name;
}

// A stack frame's "function (file:line)" with the function's name as the options want it.
std::string FrameText(const std::string& frame, const ReportOptions& options) {
  size_t paren = frame.rfind(" (");
  if (paren == std::string::npos) return Name(frame, options);
  return Name(frame.substr(0, paren), options) + frame.substr(paren);
}

// "← stage_a (app.cc:60) ← main (app.cc:70)".
std::string ChainText(const model::HeapChain& chain, const ReportOptions& options) {
  std::string text;
  for (const std::string& frame : chain.frames)
    text += (text.empty() ? "← " : " ← ") + FrameText(frame, options);
  return text;
}

// Estimates (the sampled mode) carry a ~, as sampled counts do elsewhere.
std::string Approx(const model::HeapProfile& heap, std::string text) {
  return heap.estimated() && text != "0" && text != "0 B" ? "~" + text : text;
}
std::string ApproxBytes(const model::HeapProfile& heap, uint64_t bytes) {
  return Approx(heap, Bytes(bytes));
}
std::string ApproxCount(const model::HeapProfile& heap, uint64_t count) {
  return Approx(heap, fmt::format("{}", count));
}

std::string Percent(uint64_t part, uint64_t whole) {
  return FormatPercent(whole ? 100.0 * double(part) / double(whole) : 0.0);
}

// The first `limit` sites by `key`, leaving out those at zero. Every site table has the same
// columns; only the order differs.
template <typename Key>
void SiteTable(const model::HeapProfile& heap, const ReportOptions& options, TableWriter& w,
               std::string_view id, std::string_view title, Key key, bool with_chains) {
  std::vector<const model::HeapSite*> sites;
  for (const auto& s : heap.sites)
    if (key(s) > 0) sites.push_back(&s);
  std::sort(sites.begin(), sites.end(), [&](const auto* a, const auto* b) {
    if (key(*a) != key(*b)) return key(*a) > key(*b);
    return SiteName(*a, options) < SiteName(*b, options);
  });
  if (sites.size() > options.top_count) sites.resize(options.top_count);
  w.title(id, title);
  w.header({"bytes", "calls", "at peak", "temporary", "leaked", "site"});
  for (const auto* s : sites) {
    w.row({ApproxBytes(heap, s->bytes), ApproxCount(heap, s->calls),
           ApproxBytes(heap, s->peak_bytes),
           heap.estimated() ? "–" : fmt::format("{}", s->temporary_calls),
           ApproxBytes(heap, s->leaked_bytes), SiteName(*s, options)});
    // Where the site was called from, when more than one way or not plainly from main.
    if (!with_chains) continue;
    for (const model::HeapChain& chain : s->chains)
      w.row({ApproxBytes(heap, chain.bytes), ApproxCount(heap, chain.calls), "", "", "",
             "  " + ChainText(chain, options)});
  }
  w.flush();
}

}  // namespace

void PrintHeap(const model::HeapProfile& heap, const ReportOptions& options, std::string& out) {
  if (options.machine) {
    out += fmt::format(
        "peak_bytes\t{}\ntotal_bytes\t{}\nalloc_calls\t{}\nfree_calls\t{}\n"
        "temporary_calls\t{}\nleaked_bytes\t{}\nleaked_calls\t{}\n",
        heap.peak_bytes, heap.total_bytes, heap.alloc_calls, heap.free_calls, heap.temporary_calls,
        heap.leaked_bytes, heap.leaked_calls);
    if (heap.estimated())
      out += fmt::format(
          "sample_bytes\t{}\nsampled_calls\t{}\ntotal_bytes_error\t{}\npeak_bytes_error\t{}\n",
          heap.sample_bytes, heap.sampled_calls, heap.total_bytes_error, heap.peak_bytes_error);
    return;
  }
  TableWriter w(options, out);
  w.title("heap", "Heap");
  if (heap.estimated())
    w.row({"sampled", fmt::format("{} allocations", heap.sampled_calls),
           fmt::format("one per {} allocated on average; ~ marks estimates (docs/heap.md)",
                       Bytes(heap.sample_bytes))});
  w.row({"peak", ApproxBytes(heap, heap.peak_bytes),
         (heap.estimated() ? fmt::format("± {} ", Bytes(heap.peak_bytes_error)) : "") + "at " +
             FormatTime(heap.peak_time_ns, false)});
  w.row({"total allocated", ApproxBytes(heap, heap.total_bytes),
         heap.estimated() ? fmt::format("± {} (one standard error)", Bytes(heap.total_bytes_error))
                          : ""});
  w.row({"allocation calls", ApproxCount(heap, heap.alloc_calls)});
  w.row({"free calls", ApproxCount(heap, heap.free_calls)});
  if (heap.estimated()) {
    w.row({"temporary allocations", "–", "not known from samples"});
  } else {
    w.row({"temporary allocations", fmt::format("{}", heap.temporary_calls),
           Percent(heap.temporary_calls, heap.alloc_calls) + "% of calls"});
  }
  w.row({"leaked", ApproxBytes(heap, heap.leaked_bytes),
         fmt::format("in {} blocks", ApproxCount(heap, heap.leaked_calls))});
  if (heap.mmap_calls)
    w.row({"anonymous mmap", ApproxBytes(heap, heap.mmap_bytes),
           fmt::format("in {} calls, {} munmap, {} still mapped",
                       ApproxCount(heap, heap.mmap_calls), ApproxCount(heap, heap.munmap_calls),
                       ApproxBytes(heap, heap.mmap_leaked_bytes))});
  if (heap.unknown_frees)
    w.row({"releases of blocks allocated before recording", fmt::format("{}", heap.unknown_frees)});
  w.flush();

  SiteTable(
      heap, options, w, "sites_by_bytes",
      "Allocation sites by bytes (each with the callers it was reached from, ← caller)",
      [](const model::HeapSite& s) { return s.bytes; }, true);
  SiteTable(
      heap, options, w, "sites_by_calls", "Allocation sites by calls",
      [](const model::HeapSite& s) { return s.calls; }, false);
  SiteTable(
      heap, options, w, "sites_by_peak", "Allocation sites by peak contribution",
      [](const model::HeapSite& s) { return s.peak_bytes; }, false);
  uint32_t limit = options.top_count;

  w.title("leaks", "Leaks");
  w.header({"bytes", "blocks", "stack"});
  size_t shown = 0;
  for (const auto& leak : heap.leaks) {
    if (shown++ == limit) break;
    w.row({ApproxBytes(heap, leak.bytes), ApproxCount(heap, leak.calls),
           leak.stack.empty() ? "[unknown]" : FrameText(leak.stack.front(), options)});
    for (size_t i = 1; i < leak.stack.size(); ++i)
      w.row({"", "", "  " + FrameText(leak.stack[i], options)});
  }
  w.flush();

  w.title("sizes", "Allocation sizes (one # is 2% of the calls)");
  w.header({"size", "calls", "percent", ""});
  for (const auto& [size_class, calls] : heap.size_histogram) {
    double percent = heap.alloc_calls ? 100.0 * double(calls) / double(heap.alloc_calls) : 0;
    std::string bar(percent > 0 ? size_t(std::min(percent, 100.0) / 2) : 0, '#');
    if (bar.empty()) bar = "!";
    std::string range =
        size_class == 0 ? "0" : fmt::format("{}-{}", size_class, size_class * 2 - 1);
    w.row({range, ApproxCount(heap, calls), FormatPercent(percent), bar});
  }
}

}  // namespace hotline::report

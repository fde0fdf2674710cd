// `hotline html`: a static report in a directory that opens from disk with no server and no
// network (docs/html.md). index.html, the report's own scripts and styles (embedded in the
// binary), and the data as scripts that assign to one global, split so that the stacks of each
// flame graph, each source file and each texprofile table load only when shown.
//
// Every number comes from model::Profile (and model::HeapProfile); the scripts only lay out,
// sort, filter and zoom. Text from the profile or the sources is never markup: the data is JSON
// with every `<`, `>` and `&` escaped, and the scripts render it as text.
#pragma once

#include <string>
#include <vector>

#include "analysis/complexity.h"
#include "base/status.h"
#include "model/heap.h"
#include "model/profile.h"
#include "model/watch.h"

namespace hotline::html {

struct HtmlInput {
  const model::Profile* profile = nullptr;
  const model::HeapProfile* heap = nullptr;      // a profile recorded with --heap; else nullptr
  const model::WatchProfile* watches = nullptr;  // with watched variables; else nullptr
  // Fitted sizes (hotline_size() calls, or the runs of a sweep): the complexity page; else
  // nullptr or empty.
  const std::vector<analysis::FunctionComplexity>* complexity = nullptr;
  std::string profile_path;              // shown in the overview
  std::vector<std::string> warnings;     // what reading the profile met, shown in the overview
  std::vector<std::string> source_dirs;  // where else to look for sources
};

// Writes the report into `dir`. It is built in a fresh directory beside `dir` and renamed into
// place only when complete, so a failure leaves nothing behind; an earlier report in `dir` is
// replaced, any other non-empty `dir` is refused. Errors name the directory and the reason.
Status WriteHtmlReport(const HtmlInput& input, const std::string& dir);

}  // namespace hotline::html

#include "model/order.h"

#include <algorithm>
#include <numeric>

namespace hotline::model {

void PutInOrder(Profile& p) {
  for (auto& edges : p.callees) {
    std::sort(edges.begin(), edges.end(), [](const CallEdge& a, const CallEdge& b) {
      if (a.time_ns != b.time_ns) return a.time_ns > b.time_ns;
      if (a.loop_ns != b.loop_ns) return a.loop_ns > b.loop_ns;
      return a.child < b.child;
    });
  }
  std::sort(p.stack_times.begin(), p.stack_times.end(), [](const StackTime& a, const StackTime& b) {
    return a.stack != b.stack ? a.stack < b.stack : a.thread < b.thread;
  });

  std::vector<uint32_t> file_order(p.files.size());
  std::iota(file_order.begin(), file_order.end(), 0);
  std::sort(file_order.begin(), file_order.end(), [&](uint32_t a, uint32_t b) {
    bool pa = p.files[a].pseudo != PseudoKind::kNone, pb = p.files[b].pseudo != PseudoKind::kNone;
    if (pa != pb) return pb;
    return p.files[a].path < p.files[b].path;
  });
  std::vector<FileId> new_file(p.files.size());
  std::vector<File> files;
  files.reserve(p.files.size());
  for (uint32_t old : file_order) {
    new_file[old] = FileId(files.size());
    files.push_back(std::move(p.files[old]));
  }
  p.files = std::move(files);
  for (Function& f : p.functions)
    if (f.file.valid()) f.file = new_file[f.file.index()];
  for (Line& l : p.lines) l.file = new_file[l.file.index()];

  std::vector<uint32_t> line_order(p.lines.size());
  std::iota(line_order.begin(), line_order.end(), 0);
  std::sort(line_order.begin(), line_order.end(), [&](uint32_t a, uint32_t b) {
    if (p.lines[a].file != p.lines[b].file) return p.lines[a].file < p.lines[b].file;
    return p.lines[a].line < p.lines[b].line;
  });
  std::vector<LineId> new_line(p.lines.size());
  std::vector<Line> lines;
  lines.reserve(p.lines.size());
  for (uint32_t old : line_order) {
    new_line[old] = LineId(lines.size());
    lines.push_back(p.lines[old]);
  }
  p.lines = std::move(lines);
  for (Sample& s : p.samples) s.line = new_line[s.line.index()];
  for (StackFrame& f : p.stack_frames) f.line = new_line[f.line.index()];
  for (FunctionLine& fl : p.function_lines) fl.line = new_line[fl.line.index()];
  std::sort(p.function_lines.begin(), p.function_lines.end(),
            [](const FunctionLine& a, const FunctionLine& b) {
              return a.function != b.function ? a.function < b.function : a.line < b.line;
            });
}

}  // namespace hotline::model

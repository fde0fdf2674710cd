// `hotline tex` on real TeX documents (tests/tex): exact macro call counts, definition sites,
// TeX's tail calls, \profileon/\profileoff, the deterministic token cost, a LaTeX article with
// amsmath whose PDF is the stock engine's, and a document with an error. The first test to run
// builds the profiling pdfTeX (frontends/tex/build-pdftex.sh) and its formats, once per build
// folder.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "format/raw_profile.h"
#include "format/reader.h"
#include "format/schema.h"
#include "harness.h"

namespace hotline::testing {
namespace {

namespace fs = std::filesystem;

const std::string kDocs = std::string(HOTLINE_SOURCE_DIR) + "/tests/tex/";

// A scratch directory holding the given test documents.
std::string DocDir(const std::string& name, const std::vector<std::string>& docs) {
  std::string dir = ScratchDir(name);
  for (const std::string& d : docs) fs::copy_file(kDocs + d, dir + "/" + d);
  return dir;
}

RunResult Tex(const std::vector<std::string>& args, const std::string& dir) {
  std::vector<std::string> all = {"tex"};
  all.insert(all.end(), args.begin(), args.end());
  return Hotline(all, dir);
}

struct Macro {
  std::string name, def_file;
  uint64_t def_line = 0;
  bool operator<(const Macro& o) const {
    return std::tie(name, def_file, def_line) < std::tie(o.name, o.def_file, o.def_line);
  }
};

const format::RawFrame* FrameOf(const format::RawProfile& p, uint64_t address) {
  if (!format::IsNamedFrame(address)) return nullptr;
  auto it = p.frames.find(format::NamedFrameId(address));
  return it == p.frames.end() ? nullptr : &it->second;
}

// Calls per macro (name, definition file's name, definition line) from the last CALL_COUNTS.
std::map<Macro, uint64_t> Calls(const format::RawProfile& p) {
  std::map<Macro, uint64_t> calls;
  if (p.call_counts.empty()) return calls;
  for (const format::RawCallEdge& e : p.call_counts.back().edges) {
    auto fn = p.trace_functions.find(e.callee);
    if (fn == p.trace_functions.end()) continue;
    const format::RawFrame* f = FrameOf(p, fn->second);
    if (!f) continue;
    calls[{f->name, fs::path(f->def_file).filename(), f->def_line}] += e.calls;
  }
  return calls;
}

uint64_t CallsOf(const format::RawProfile& p, const std::string& name) {
  uint64_t n = 0;
  for (const auto& [m, c] : Calls(p))
    if (m.name == name) n += c;
  return n;
}

// Σ sample weight whose stack holds a frame named `name` (anywhere), and the total.
std::pair<uint64_t, uint64_t> WeightUnder(const format::RawProfile& p, const std::string& name) {
  uint64_t under = 0, total = 0;
  for (const format::SampleRecord& s : p.samples) {
    total += s.weight;
    for (uint64_t a : p.stack(s.node)) {
      const format::RawFrame* f = FrameOf(p, a);
      if (f && f->name == name) {
        under += s.weight;
        break;
      }
    }
  }
  return {under, total};
}

// Σ sample weight whose stack holds a frame named `inner` and one named `outer`.
uint64_t WeightUnderBoth(const format::RawProfile& p, const std::string& inner,
                         const std::string& outer) {
  uint64_t both = 0;
  for (const format::SampleRecord& s : p.samples) {
    bool i = false, o = false;
    for (uint64_t a : p.stack(s.node))
      if (const format::RawFrame* f = FrameOf(p, a)) {
        i = i || f->name == inner;
        o = o || f->name == outer;
      }
    if (i && o) both += s.weight;
  }
  return both;
}

// Σ sample weight whose stack has `inner` called directly by `outer`.
uint64_t WeightOnEdge(const format::RawProfile& p, const std::string& outer,
                      const std::string& inner) {
  uint64_t on = 0;
  for (const format::SampleRecord& s : p.samples) {
    std::vector<uint64_t> frames = p.stack(s.node);  // innermost first
    for (size_t i = 0; i + 1 < frames.size(); ++i) {
      const format::RawFrame* callee = FrameOf(p, frames[i]);
      const format::RawFrame* caller = FrameOf(p, frames[i + 1]);
      if (callee && caller && callee->name == inner && caller->name == outer) {
        on += s.weight;
        break;
      }
    }
  }
  return on;
}

// Σ sample weight per file of the innermost frame.
std::map<std::string, uint64_t> WeightPerFile(const format::RawProfile& p) {
  std::map<std::string, uint64_t> per;
  for (const format::SampleRecord& s : p.samples) {
    std::vector<uint64_t> frames = p.stack(s.node);
    if (frames.empty()) continue;
    if (const format::RawFrame* f = FrameOf(p, frames[0])) per[f->file] += s.weight;
  }
  return per;
}

TEST(Tex, PlainLoopCountsAndDefinitionSites) {
  std::string dir = DocDir("tex_loop", {"loop.tex", "twice.tex"});
  RunResult r = Tex({"--", "pdftex", "-interaction=nonstopmode", "loop.tex"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("n=1000"), std::string::npos) << r.out;
  format::RawProfile p = Load(dir + "/loop.hotline");
  ASSERT_TRUE(p.end.has_value());
  EXPECT_EQ(p.end->code, 0u);
  std::map<Macro, uint64_t> calls = Calls(p);
  EXPECT_EQ((calls[{"\\foo", "loop.tex", 3}]), 1000u);
  // \twice defined in two files: two macros, one call each, at their own definitions.
  EXPECT_EQ((calls[{"\\twice", "loop.tex", 4}]), 1u);
  EXPECT_EQ((calls[{"\\twice", "twice.tex", 1}]), 1u);
  EXPECT_EQ(CallsOf(p, "\\heavy"), 1u);
  EXPECT_EQ(CallsOf(p, "\\light"), 1u);
  // plain.tex's \loop: \iterate once per \loop, then \next (= \iterate) once per iteration.
  // \body is defined where its \def is, in \loop's text: one row for both loops, line 13's
  // (1000 iterations) and \heavy's (30000).
  EXPECT_EQ((calls[{"\\body", "plain.tex", 527}]), 1001u + 30001u);
  // The \input file is a frame, and plain.tex's macros are defined where plain.tex says.
  EXPECT_EQ((calls[{"./twice.tex", "twice.tex", 0}]), 1u);
  EXPECT_EQ(calls.count({"\\loop", "plain.tex", 527}), 1u);
  // Exact slot counts per line: \foo's body (line 3) ran its one command 1000 times, and the
  // file's line 3 gave two slots of its own (\def and the space at its end).
  uint64_t line3 = 0;
  for (const format::RawLineCounts& lc : p.line_counts)
    if (fs::path(lc.file).filename() == "loop.tex" && lc.module == "tex")
      for (auto [line, n] : lc.lines)
        if (line == 3) line3 = n;
  EXPECT_EQ(line3, 1000u + 2u);
  // A file calling a macro is shown at the line of the call: \heavy is called at loop.tex:14.
  bool heavy_seen = false;
  for (const format::SampleRecord& s : p.samples) {
    std::vector<uint64_t> frames = p.stack(s.node);  // innermost first
    for (size_t i = 0; i + 1 < frames.size(); ++i) {
      const format::RawFrame* f = FrameOf(p, frames[i]);
      if (!f || f->name != "\\heavy") continue;
      const format::RawFrame* caller = FrameOf(p, frames[i + 1]);
      ASSERT_NE(caller, nullptr);
      EXPECT_EQ(caller->name, "./loop.tex");
      EXPECT_EQ(caller->line, 14u);
      heavy_seen = true;
    }
  }
  EXPECT_TRUE(heavy_seen);
  // The command summary: \advance ran once per \foo, \countdown step and \heavy iteration.
  uint64_t advance = 0;
  for (const format::RawTexCommand& c : p.tex_commands)
    if (c.name == "advance") advance = c.slots;
  EXPECT_EQ(advance, 1000u + 300u + 30000u);
  // The summary counts what the engine measured, command slots (-C's), not the records that
  // carry them, and as many functions as -M lists.
  uint64_t slots = 0;
  for (const format::RawTexCommand& c : p.tex_commands) slots += c.slots;
  RunResult summary = Hotline({"report", "loop.hotline"}, dir);
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  auto value = [&](const std::string& key) {
    std::istringstream in(summary.out);
    for (std::string line; std::getline(in, line);)
      if (line.rfind(key + "  ", 0) == 0)
        return line.substr(line.find_first_not_of(' ', key.size()));
    return std::string("no row ") + key;
  };
  EXPECT_EQ(value("command slots"), std::to_string(slots)) << summary.out;
  EXPECT_EQ(summary.out.find("samples"), std::string::npos) << summary.out;
  // -R shows what each record stands for: they add up to the files' time (-F).
  auto column_sum = [&](const std::vector<std::string>& args, size_t column) {
    RunResult t = Hotline(args, dir);
    EXPECT_EQ(t.exit_code, 0) << t.err;
    uint64_t sum = 0;
    std::istringstream in(t.out);
    for (std::string line; std::getline(in, line);) {
      std::istringstream fields(line);
      std::string field;
      for (size_t i = 0; i <= column && std::getline(fields, field, '\t'); ++i)
        if (i == column) sum += std::strtoull(field.c_str(), nullptr, 10);
    }
    return sum;
  };
  uint64_t raw_weight = column_sum({"report", "-R", "-m", "loop.hotline"}, 2);
  EXPECT_GT(raw_weight, 0u);
  EXPECT_EQ(raw_weight, column_sum({"report", "-F", "-m", "-p0", "loop.hotline"}, 2));
  RunResult index = Hotline({"report", "-M", "-m", "-p0", "loop.hotline"}, dir);
  EXPECT_EQ(value("functions"),
            std::to_string(std::count(index.out.begin(), index.out.end(), '\n')))
      << summary.out << index.out;
}

TEST(Tex, RunTimeDefinitionsHaveOneRowAtTheirDef) {
  std::string dir = DocDir("tex_defsites", {"defsites.tex"});
  RunResult r = Tex({"--", "pdftex", "-interaction=nonstopmode", "defsites.tex"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  std::map<Macro, uint64_t> calls = Calls(Load(dir + "/defsites.hotline"));
  // \x is defined by \setx's text at line 3, not at the three lines that call \setx.
  EXPECT_EQ((calls[{"\\x", "defsites.tex", 3}]), 3u);
  EXPECT_EQ((calls[{"\\setx", "defsites.tex", 3}]), 3u);
  // \y is defined by the \everypar text that \setup assigned (line 8), at each paragraph.
  EXPECT_GT((calls[{"\\y", "defsites.tex", 8}]), 0u);
  EXPECT_EQ((calls[{"\\y", "defsites.tex", 8}]), (calls[{"\\everypar", "defsites.tex", 8}]));
  size_t x_rows = 0, y_rows = 0;
  for (const auto& [m, n] : calls) {
    x_rows += m.name == "\\x";
    y_rows += m.name == "\\y";
  }
  EXPECT_EQ(x_rows, 1u);
  EXPECT_EQ(y_rows, 1u);
}

TEST(Tex, TailRecursionKeepsTheChainShallow) {
  std::string dir = DocDir("tex_tail", {"loop.tex", "twice.tex"});
  RunResult r = Tex({"--", "pdftex", "-interaction=nonstopmode", "loop.tex"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  format::RawProfile p = Load(dir + "/loop.hotline");
  // \countdown calls itself as its last token 300 times: 301 calls, and TeX's tail call (the
  // caller popped before the callee) does not lose the chain nor grow it 300 deep.
  EXPECT_EQ(CallsOf(p, "\\countdown"), 301u);
  ASSERT_FALSE(p.call_counts.empty());
  EXPECT_LT(p.call_counts.back().max_depth, 12u);
  // Every \countdown stack has the document below it: the logical chain was kept.
  for (const format::SampleRecord& s : p.samples) {
    std::vector<uint64_t> frames = p.stack(s.node);
    bool countdown = false, document = false;
    for (uint64_t a : frames)
      if (const format::RawFrame* f = FrameOf(p, a)) {
        countdown = countdown || f->name == "\\countdown";
        document = document || fs::path(f->name).filename() == "loop.tex";
      }
    if (countdown) {
      EXPECT_TRUE(document);
    }
  }
}

// A control sequence whose name holds a control character (plain's \^^M, control-return) is
// named as TeX shows it, and no line-based export carries the raw character.
TEST(Tex, ControlCharactersInNamesAreShownAsTexShowsThem) {
  std::string dir = DocDir("tex_ctrl", {"control_return.tex"});
  RunResult r = Tex({"--", "pdftex", "-interaction=nonstopmode", "control_return.tex"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  format::RawProfile p = Load(dir + "/control_return.hotline");
  EXPECT_EQ(CallsOf(p, "\\^^M"), 2u);
  for (const char* format : {"folded", "callgrind"}) {
    std::string out = dir + "/out." + format;
    RunResult e = Hotline({"export", "-f", format, "-o", out, "control_return.hotline"}, dir);
    ASSERT_EQ(e.exit_code, 0) << e.err;
    std::ifstream in(out, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(text.find('\r'), std::string::npos) << format;
    EXPECT_NE(text.find("\\^^M"), std::string::npos) << format;
  }
}

// `\expandafter\a\fi` as a macro's last tokens is a tail call, as `\let\cnext\c ... \cnext` is:
// the recursion's calls are its own edges, and all its time is under the macro that started it
// (mutual recursion too).
TEST(Tex, TailCallsThroughExpandafterKeepTheirCaller) {
  std::string dir = DocDir("tex_tail_expandafter", {"tail_expandafter.tex"});
  RunResult r = Tex({"--", "pdftex", "-interaction=nonstopmode", "tail_expandafter.tex"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  format::RawProfile p = Load(dir + "/tail_expandafter.hotline");
  std::map<std::pair<std::string, std::string>, uint64_t> edges;
  auto name = [&](uint64_t id) -> std::string {
    auto fn = p.trace_functions.find(id);
    const format::RawFrame* f = fn == p.trace_functions.end() ? nullptr : FrameOf(p, fn->second);
    return f ? f->name : "";
  };
  ASSERT_FALSE(p.call_counts.empty());
  for (const format::RawCallEdge& e : p.call_counts.back().edges)
    edges[{name(e.caller), name(e.callee)}] += e.calls;
  EXPECT_EQ((edges[{"\\runa", "\\a"}]), 1u);
  EXPECT_EQ((edges[{"\\a", "\\a"}]), 2000u);
  EXPECT_EQ((edges[{"\\c", "\\cnext"}]), 1u);
  EXPECT_EQ((edges[{"\\runeven", "\\even"}]), 1u);
  EXPECT_EQ((edges[{"\\even", "\\odd"}]), 1000u);
  EXPECT_EQ((edges[{"\\odd", "\\even"}]), 1000u);
  // A macro calling itself last keeps its second activation above the first: the recursion's
  // time is on the \a→\a edge, and the stack does not grow with it.
  EXPECT_GT(WeightOnEdge(p, "\\a", "\\a"), 0u);
  EXPECT_LT(p.call_counts.back().max_depth, 20u);  // of 2000 recursive calls
  // Every sample in a recursion has the macro that started it below, and a macro that reads
  // its argument past its caller's end (\star*), after a \futurelet looked ahead, is called
  // by that caller's chain.
  for (const auto& [macro, starter] : {std::pair<std::string, std::string>{"\\a", "\\runa"},
                                       {"\\cnext", "\\runc"},
                                       {"\\odd", "\\runeven"},
                                       {"\\work", "\\go"}}) {
    auto [under_macro, total] = WeightUnder(p, macro);
    EXPECT_GT(under_macro, 0u) << macro;
    EXPECT_EQ(WeightUnderBoth(p, macro, starter), under_macro) << macro;
  }
}

// The profile's time is the engine's CPU time: beside a program spinning on the same CPU, the
// engine runs about half the time it exists, and only that half is charged.
TEST(Tex, TimeIsTheEnginesCpuTimeBesideABusyCpu) {
  std::string dir = DocDir("tex_cpu", {"spin.tex"});
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &allowed)) ++cpu;
  ASSERT_LT(cpu, CPU_SETSIZE);
  pid_t spinner = fork();
  ASSERT_GE(spinner, 0);
  if (spinner == 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof one, &one);
    for (;;) asm volatile("" ::: "memory");
  }
  RunResult r = Execute({"/usr/bin/taskset", "-c", std::to_string(cpu), HOTLINE_BIN, "tex", "--",
                         "pdftex", "-interaction=nonstopmode", "spin.tex"},
                        dir);
  kill(spinner, SIGKILL);
  waitpid(spinner, nullptr, 0);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  format::RawProfile p = Load(dir + "/spin.hotline");
  ASSERT_TRUE(p.process.has_value());
  ASSERT_TRUE(p.end.has_value());
  ASSERT_EQ(p.threads.size(), 1u);
  ASSERT_TRUE(p.threads[0].cpu_ns.has_value());
  uint64_t cpu_ns = *p.threads[0].cpu_ns, wall_ns = p.end->time - p.process->time;
  uint64_t charged = 0;
  for (const format::SampleRecord& s : p.samples) charged += s.weight;
  if (wall_ns < cpu_ns * 13 / 10)
    GTEST_SKIP() << "the engine had its CPU to itself (" << wall_ns << " ns for " << cpu_ns
                 << " ns of CPU): nothing to tell apart";
  EXPECT_LE(charged, cpu_ns + cpu_ns / 10 + 20'000'000) << "wall " << wall_ns;
  EXPECT_GT(charged, cpu_ns / 2);
}

TEST(Tex, HeavyMacroDominatesDeterministically) {
  std::string dir = DocDir("tex_heavy", {"loop.tex", "twice.tex"});
  RunResult r =
      Tex({"--cost", "tokens", "--", "pdftex", "-interaction=nonstopmode", "loop.tex"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  format::RawProfile a = Load(dir + "/loop.hotline");
  auto [heavy, total] = WeightUnder(a, "\\heavy");
  auto [light, total2] = WeightUnder(a, "\\light");
  // \heavy's 30000 iterations against \foo's 1000 and \countdown's 300.
  EXPECT_GT(heavy * 10, total * 8) << heavy << " of " << total;
  EXPECT_GT(light, 0u);
  EXPECT_LT(light * 1000, total);
  // Tokens are the same from run to run.
  RunResult again = Tex({"--cost", "tokens", "-o", "again.hotline", "--", "pdftex",
                         "-interaction=nonstopmode", "loop.tex"},
                        dir);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  format::RawProfile b = Load(dir + "/again.hotline");
  EXPECT_EQ(WeightUnder(b, "\\heavy"), WeightUnder(a, "\\heavy"));
  EXPECT_EQ(WeightPerFile(b), WeightPerFile(a));
}

TEST(Tex, ProfileOnAndOff) {
  std::string dir = DocDir("tex_onoff", {"onoff.tex"});
  RunResult r =
      Tex({"--start", "no", "--", "pdftex", "-interaction=nonstopmode", "onoff.tex"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  format::RawProfile p = Load(dir + "/onoff.hotline");
  EXPECT_EQ(CallsOf(p, "\\inside"), 25u);
  EXPECT_EQ(CallsOf(p, "\\before"), 0u);
  EXPECT_EQ(CallsOf(p, "\\after"), 0u);
  EXPECT_EQ(WeightUnder(p, "\\before").first, 0u);
  EXPECT_GT(WeightUnder(p, "\\inside").first, 0u);
}

// Reads a whole file.
std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(Tex, LatexArticleMatchesTheStockEngine) {
  // One date for both engines (their PDFs and logs otherwise differ in it).
  setenv("SOURCE_DATE_EPOCH", "1700000000", 1);
  setenv("FORCE_SOURCE_DATE", "1", 1);
  std::string dir = DocDir("tex_article", {"article.tex"});
  RunResult r =
      Tex({"--cost", "tokens", "--", "pdflatex", "-interaction=nonstopmode", "article.tex"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  format::RawProfile p = Load(dir + "/article.hotline");
  // The hottest file is one of LaTeX's: its kernel, expl3 or amsmath, not the document.
  std::map<std::string, uint64_t> per = WeightPerFile(p);
  std::string hottest;
  uint64_t most = 0;
  for (const auto& [file, w] : per)
    if (file.rfind("system ", 0) != 0 && w > most) most = w, hottest = file;
  std::set<std::string> expected = {"latex.ltx", "expl3-code.tex", "amsmath.sty"};
  EXPECT_TRUE(expected.count(fs::path(hottest).filename())) << hottest;
  bool amsmath = false;
  for (const auto& [file, w] : per)
    amsmath = amsmath || (fs::path(file).filename() == "amsmath.sty" && w > 0);
  EXPECT_TRUE(amsmath);
  EXPECT_EQ(CallsOf(p, "\\sq"), 2u);
  EXPECT_GE(CallsOf(p, "\\align"), 1u);
  std::map<Macro, uint64_t> calls = Calls(p);
  EXPECT_EQ((calls[{"\\sq", "article.tex", 3}]), 2u);
  // A \newcommand is defined where it begins (article.cls:302), not where its arguments end
  // nor in the LaTeX kernel macro that makes the \def.
  EXPECT_EQ((calls[{"\\section", "article.cls", 302}]), 2u);
  // \section's work is inside it: \@startsection's \@ifstar looks ahead with \futurelet, and
  // \@xdblarg reads the title past the end of the lists that called it.
  auto [sect, all] = WeightUnder(p, "\\@sect");
  EXPECT_GT(sect, 0u);
  EXPECT_EQ(WeightUnderBoth(p, "\\@sect", "\\section"), sect);

  // The same document on Debian's own pdflatex: same pages, same text.
  std::string stock = DocDir("tex_article_stock", {"article.tex"});
  RunResult s = Execute({"/usr/bin/pdflatex", "-interaction=nonstopmode", "article.tex"}, stock);
  ASSERT_EQ(s.exit_code, 0) << s.out;
  auto info = [](const std::string& d) {
    RunResult i = Execute({"/usr/bin/pdfinfo", "article.pdf"}, d);
    std::istringstream in(i.out);
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("Pages:", 0) == 0) return line;
    return std::string("no page count: ") + i.err;
  };
  EXPECT_EQ(info(dir), info(stock));
  // TeX's own phases are counted exactly: one initialize, a ship_out per page.
  EXPECT_EQ(CallsOf(p, "initialize"), 1u);
  std::string pages = info(dir);
  pages.erase(0, pages.find_first_not_of("Pages: "));
  EXPECT_EQ(std::to_string(CallsOf(p, "ship_out")), pages);
  RunResult t1 = Execute({"/usr/bin/pdftotext", "article.pdf", "-"}, dir);
  RunResult t2 = Execute({"/usr/bin/pdftotext", "article.pdf", "-"}, stock);
  EXPECT_EQ(t1.exit_code, 0);
  EXPECT_FALSE(t1.out.empty());
  EXPECT_EQ(t1.out, t2.out);
  // The log begins as the stock engine's: its banner and format name (up to the format's date).
  auto banner = [](const std::string& d) {
    std::ifstream log(d + "/article.log");
    std::string line;
    std::getline(log, line);
    size_t format = line.find("format=");
    return format == std::string::npos ? line : line.substr(0, line.find(' ', format));
  };
  EXPECT_EQ(banner(dir), banner(stock));
  EXPECT_NE(banner(dir).find("(TeX Live 2022/Debian)"), std::string::npos) << banner(dir);
  // The engine does not show itself: the same log (its memory statistics too) past the first
  // line (whose format date is when each format was made) and the same PDF, byte for byte.
  auto past_first_line = [](const std::string& text) { return text.substr(text.find('\n')); };
  EXPECT_EQ(past_first_line(Slurp(dir + "/article.log")),
            past_first_line(Slurp(stock + "/article.log")));
  EXPECT_TRUE(Slurp(dir + "/article.pdf") == Slurp(stock + "/article.pdf"));

  // Every view reads it: the command table, annotate of a package, html.
  RunResult c = Hotline({"report", "-C", "-N", "article.hotline"}, dir);
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("TeX commands"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("assign_toks"), std::string::npos) << c.out;
  RunResult an = Hotline({"annotate", "article.hotline", "amsmath.sty"}, dir);
  EXPECT_EQ(an.exit_code, 0) << an.err;
  EXPECT_NE(an.out.find("/amsmath.sty\n  line"), std::string::npos) << an.out;
  RunResult h = Hotline({"html", "article.hotline", "-o", "html"}, dir);
  EXPECT_EQ(h.exit_code, 0) << h.err;
  EXPECT_TRUE(fs::exists(dir + "/html/index.html"));
}

TEST(Tex, ErrorRunsAsTheStockEngine) {
  std::string dir = DocDir("tex_error", {"error.tex"});
  RunResult r = Tex({"--", "pdftex", "-interaction=nonstopmode", "error.tex"}, dir);
  std::string stock = DocDir("tex_error_stock", {"error.tex"});
  RunResult s = Execute({"/usr/bin/pdftex", "-interaction=nonstopmode", "error.tex"}, stock);
  EXPECT_EQ(s.exit_code, 1);
  EXPECT_EQ(r.exit_code, s.exit_code) << r.err;
  EXPECT_NE(r.out.find("! Undefined control sequence."), std::string::npos) << r.out;
  format::RawProfile p = Load(dir + "/error.hotline");
  ASSERT_TRUE(p.end.has_value());
  EXPECT_EQ(p.end->code, 1u);
  EXPECT_EQ(CallsOf(p, "\\a"), 1u);
  RunResult rep = Hotline({"report", "-M", "error.hotline"}, dir);
  EXPECT_EQ(rep.exit_code, 0) << rep.err;
}

TEST(Tex, RepeatKeepsEveryRun) {
  std::string dir = DocDir("tex_repeat", {"loop.tex", "twice.tex"});
  RunResult r = Tex(
      {"--repeat", "3", "--cost", "tokens", "--", "pdftex", "-interaction=nonstopmode", "loop.tex"},
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  RunResult rep = Hotline({"report", "-M", "-m", "loop.hotline"}, dir);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  // Three runs read as their sum: \foo's calls are 3000.
  EXPECT_NE(rep.out.find("3000"), std::string::npos) << rep.out;
  // The command table adds up too: \advance ran 1000 + 300 + 30000 times a run.
  RunResult commands = Hotline({"report", "-C", "-m", "loop.hotline"}, dir);
  ASSERT_EQ(commands.exit_code, 0) << commands.err;
  EXPECT_NE(commands.out.find("\t93900\t"), std::string::npos) << commands.out;
}

// The rows of one table of `hotline report -m`: each row's cells, by TAB.
std::vector<std::vector<std::string>> MachineRows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    std::istringstream cells_in(line);
    std::string cell;
    while (std::getline(cells_in, cell, '\t')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

// The profile file of several runs cut into one file per run, as each run wrote it.
std::vector<std::string> SplitRuns(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<uint64_t> starts;
  for (uint64_t offset = 0;;) {
    starts.push_back(offset);
    format::RawProfile raw;
    format::ReadStats stats;
    EXPECT_TRUE(format::ReadProfileFile(path, raw, &stats, offset).ok());
    if (stats.next_run == 0) break;
    offset = stats.next_run;
  }
  std::vector<std::string> runs;
  for (size_t i = 0; i < starts.size(); ++i) {
    uint64_t end = i + 1 < starts.size() ? starts[i + 1] : bytes.size();
    std::string run = path + ".run" + std::to_string(i + 1);
    std::ofstream(run, std::ios::binary) << bytes.substr(starts[i], end - starts[i]);
    runs.push_back(run);
  }
  return runs;
}

// For one table (`flag`) of the profile of several runs: every row's spread column holds the
// least and the greatest of the row's time in the runs' own reports (0 in a run without it).
// `key` picks a row's identity, `time` its time column, `spread` its spread column (a single
// run's table has none, and the same columns before it). Returns the
// rows checked, and whether every spread was one number (min = max).
std::pair<size_t, bool> CheckSpread(const std::string& dir, const std::string& merged,
                                    const std::vector<std::string>& runs, const std::string& flag,
                                    const std::vector<size_t>& key, size_t time, size_t spread) {
  auto table = [&](const std::string& file) {
    RunResult r = Hotline({"report", flag, "-m", "-N", "-p", "0", file}, dir);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::map<std::string, std::vector<std::string>> rows;
    std::vector<std::vector<std::string>> all = MachineRows(r.out);
    for (size_t i = 0; i < all.size(); ++i) {
      std::string k;
      for (size_t c : key) k += (c < all[i].size() ? all[i][c] : "?") + "|";
      rows[k] = all[i];
    }
    return rows;
  };
  // The table for people names the column; a single run's has none.
  RunResult people = Hotline({"report", flag, "-N", "-p", "0", merged}, dir);
  EXPECT_NE(people.out.find("spread"), std::string::npos) << people.out;
  std::map<std::string, std::vector<std::string>> rows = table(merged);
  std::vector<std::map<std::string, std::vector<std::string>>> per_run;
  for (const std::string& run : runs) {
    RunResult one = Hotline({"report", flag, "-N", "-p", "0", run}, dir);
    EXPECT_EQ(one.out.find("spread"), std::string::npos) << one.out;
    per_run.push_back(table(run));
  }
  size_t checked = 0;
  bool all_flat = true;
  for (const auto& [k, row] : rows) {
    EXPECT_LT(spread, row.size()) << flag << " " << k;
    if (spread >= row.size()) continue;
    uint64_t least = UINT64_MAX, most = 0, sum = 0;
    for (const auto& run : per_run) {
      auto it = run.find(k);
      uint64_t t = it == run.end() ? 0 : std::stoull(it->second[time]);
      least = std::min(least, t);
      most = std::max(most, t);
      sum += t;
    }
    EXPECT_EQ(row[spread], std::to_string(least) + "-" + std::to_string(most)) << flag << " " << k;
    EXPECT_EQ(std::stoull(row[time]), sum) << flag << " " << k;
    all_flat = all_flat && least == most;
    ++checked;
  }
  return {checked, all_flat};
}

TEST(Tex, RepeatShowsTheSpreadPerRow) {
  std::string dir = DocDir("tex_spread", {"loop.tex", "twice.tex"});
  for (std::string cost : {"time", "tokens"}) {
    std::string out = cost + ".hotline";
    RunResult r = Tex({"--repeat", "3", "--cost", cost, "-o", out, "--", "pdftex",
                       "-interaction=nonstopmode", "loop.tex"},
                      dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> runs = SplitRuns(dir + "/" + out);
    ASSERT_EQ(runs.size(), 3u);
    // With -m the spreads follow the name, so that the other columns keep their places.
    // -F: file, percent, time, count, lines, file name, spread.
    auto files = CheckSpread(dir, out, runs, "-F", {5}, 2, 6);
    // -L: file, line, percent, time, count, average, file name, spread.
    auto lines = CheckSpread(dir, out, runs, "-L", {6, 1}, 3, 7);
    // -M: file, line, calls, self, cumulative, name, self spread, cumulative spread.
    auto self = CheckSpread(dir, out, runs, "-M", {0, 1, 5}, 3, 6);
    auto cumulative = CheckSpread(dir, out, runs, "-M", {0, 1, 5}, 4, 7);
    // -C: percent, time, slots, time/slot, code, command, spread.
    auto commands = CheckSpread(dir, out, runs, "-C", {5}, 1, 6);
    for (auto [checked, flat] : {files, lines, self, cumulative, commands}) {
      EXPECT_GT(checked, 0u) << cost;
      // Tokens are the same in every run: no spread at all.
      if (cost == "tokens") {
        EXPECT_TRUE(flat);
      }
    }
  }
}

TEST(Tex, KnuthsPlainFormat) {
  std::string dir = DocDir("tex_knuth", {"loop.tex", "twice.tex"});
  RunResult r = Tex({"--", "tex", "-interaction=nonstopmode", "loop.tex"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("(preloaded format="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("/tex.fmt"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("n=1000"), std::string::npos) << r.out;
  format::RawProfile p = Load(dir + "/loop.hotline");
  EXPECT_EQ(CallsOf(p, "\\foo"), 1000u);
  EXPECT_EQ(CallsOf(p, "\\countdown"), 301u);
}

TEST(Tex, BadInput) {
  std::string dir = ScratchDir("tex_bad");
  RunResult missing = Tex({"--", "pdflatex", "nosuch.tex"}, dir);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err, "hotline tex: nosuch.tex: no such document\n");
  RunResult unknown = Tex({"--", "lualatex", "x.tex"}, dir);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown TeX command 'lualatex'"), std::string::npos);
  RunResult none = Tex({}, dir);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("after --"), std::string::npos);
  RunResult cost = Tex({"--cost", "lines", "--", "pdftex", "x.tex"}, dir);
  EXPECT_NE(cost.exit_code, 0);
}

}  // namespace
}  // namespace hotline::testing

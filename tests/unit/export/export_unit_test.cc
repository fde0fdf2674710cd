// The exporters on a profile made by hand, where every expected byte is known: the protobuf
// encoder against the wire format's worked examples, folded stacks and callgrind's name
// compression on a three-function profile, and the atomic write. The real consumers read real
// profiles in tests/programs/export_test.cc.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "export/export.h"
#include "export/protobuf.h"

namespace hotline::exporter {
namespace {

TEST(ProtoWriter, EncodesTheWireFormatsExamples) {
  // protobuf.dev's encoding guide: field 1 = 150 is 08 96 01; field 2 = "testing" is
  // 12 07 74 65 73 74 69 6e 67.
  ProtoWriter w;
  w.varint(1, 150);
  w.string(2, "testing");
  EXPECT_EQ(w.data(), std::string("\x08\x96\x01\x12\x07testing", 12));
  ProtoWriter packed;
  packed.packed(4, {3, 270, 86942});  // 22 06 03 8E 02 9E A7 05
  EXPECT_EQ(packed.data(), std::string("\x22\x06\x03\x8e\x02\x9e\xa7\x05", 8));
  ProtoWriter defaults;
  defaults.varint(1, 0);  // proto3 leaves defaults out
  defaults.packed(2, {});
  EXPECT_EQ(defaults.data(), "");
  ProtoWriter empty_string;
  empty_string.string(6, "");  // string_table[0] must be there
  EXPECT_EQ(empty_string.data(), std::string("\x32\x00", 2));
}

// main → work → leaf, on two threads; `leaf` sampled at two addresses of one line.
model::Profile HandMadeProfile() {
  model::Profile p;
  p.summary.total_ns = 600;
  p.summary.exe = "/bin/prog";
  model::Module prog;
  prog.path = "/bin/prog";
  prog.name = "prog";
  p.modules.push_back(prog);
  p.files.push_back({.path = "/src/prog.c"});
  for (uint32_t line : {3u, 7u, 12u}) p.lines.push_back({.file = model::FileId(0u), .line = line});
  for (const char* name : {"main", "work", "leaf;semi"})
    p.functions.push_back(
        {.name = name, .file = model::FileId(0u), .line = 1, .module = model::ModuleId(0u)});
  p.callees = {{{.child = model::FunctionId(1u), .time_ns = 600, .calls = 1}},
               {{.child = model::FunctionId(2u), .time_ns = 500, .calls = 2}},
               {}};
  auto frame = [](uint32_t function, uint32_t line, uint64_t address) {
    return model::StackFrame{
        .function = model::FunctionId(function), .line = model::LineId(line), .address = address};
  };
  // Stack 0: main, work, leaf at 0x30; stack 1: the same at 0x34; stack 2: main, work.
  p.addStack(
      std::vector<model::StackFrame>{frame(0, 0, 0x10), frame(1, 1, 0x20), frame(2, 2, 0x30)});
  p.addStack(
      std::vector<model::StackFrame>{frame(0, 0, 0x10), frame(1, 1, 0x20), frame(2, 2, 0x34)});
  p.addStack(std::vector<model::StackFrame>{frame(0, 0, 0x10), frame(1, 1, 0x24)});
  p.threads.resize(2);
  p.threads[0].tid = 1;
  p.threads[0].name = "main";
  p.threads[1].tid = 2;
  p.stack_times = {{model::StackId(0u), 0, 300, 3},
                   {model::StackId(1u), 1, 200, 2},
                   {model::StackId(2u), 0, 100, 1}};
  // What the model makes of those stacks (model/build.cc): leaf's line 12 is 500 ns, work's line 7
  // 100 ns of its own.
  auto line = [](uint32_t function, uint32_t line, uint64_t self, uint64_t inclusive) {
    return model::FunctionLine{model::FunctionId(function), model::LineId(line), self, inclusive};
  };
  p.function_lines = {line(0, 0, 0, 600), line(1, 1, 100, 600), line(2, 2, 500, 500)};
  return p;
}

TEST(Folded, StacksDifferingOnlyInAddressesAreOneLine) {
  // Samples by default (flamegraph.pl's unit), or nanoseconds.
  Expected<std::string> folded = ExportFolded(HandMadeProfile(), {});
  ASSERT_TRUE(folded.ok());
  EXPECT_EQ(*folded, "main;work;leaf,semi 5\nmain;work 1\n");
  folded = ExportFolded(HandMadeProfile(), {.unit = FoldedUnit::kNs});
  ASSERT_TRUE(folded.ok());
  EXPECT_EQ(*folded, "main;work;leaf,semi 500\nmain;work 100\n");
  // A measured profile (TeX's, Perl's) has time, not samples, by default.
  model::Profile measured = HandMadeProfile();
  measured.summary.interpreted = true;
  measured.summary.sampler = format::Sampler::kNone;
  folded = ExportFolded(measured, {});
  ASSERT_TRUE(folded.ok());
  EXPECT_EQ(*folded, "main;work;leaf,semi 500\nmain;work 100\n");
}

TEST(Folded, LinesAndThreads) {
  Expected<std::string> folded =
      ExportFolded(HandMadeProfile(), {.lines = true, .per_thread = true, .unit = FoldedUnit::kNs});
  ASSERT_TRUE(folded.ok());
  EXPECT_EQ(*folded,
            "thread 1 main;main;work;leaf,semi (prog.c:12) 300\n"
            "thread 2;main;work;leaf,semi (prog.c:12) 200\n"
            "thread 1 main;main;work (prog.c:7) 100\n");
}

TEST(Callgrind, SelfTimePerLineCallsAndCompressedNames) {
  Expected<std::string> out = ExportCallgrind(HandMadeProfile());
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out,
            "# callgrind format\nversion: 1\ncreator: hotline\ncmd: /bin/prog\npositions: line\n"
            "events: ns\n"
            "\nob=(1) /bin/prog\nfl=(1) /src/prog.c\nfn=(1) main\n"
            "cob=(1)\ncfi=(1)\ncfn=(2) work\ncalls=1 1\n1 600\n"
            "\nob=(1)\nfl=(1)\nfn=(2)\n7 100\n"
            "cob=(1)\ncfi=(1)\ncfn=(3) leaf;semi\ncalls=2 1\n1 500\n"
            "\nob=(1)\nfl=(1)\nfn=(3)\n12 500\n"
            "\nsummary: 600\n");
}

std::string Gunzip(const std::string& gz) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  std::string out(1 << 20, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  inflateEnd(&z);
  return out;
}

TEST(Pprof, GzippedProfileWithTheStringsAndValues) {
  Expected<std::string> gz = ExportPprof(HandMadeProfile());
  ASSERT_TRUE(gz.ok());
  std::string proto = Gunzip(*gz);
  // Sample 1's body: location_id packed [1, 2, 3] (leaf, work, main: innermost first), value
  // packed [3, 300] (samples, ns).
  EXPECT_NE(proto.find(std::string("\x0a\x03\x01\x02\x03\x12\x03\x03\xac\x02", 10)),
            std::string::npos);
  for (const char* s : {"samples", "count", "cpu", "nanoseconds", "leaf;semi", "/src/prog.c",
                        "hotline profile of /bin/prog", "thread_name"})
    EXPECT_NE(proto.find(s), std::string::npos) << s;
}

TEST(Json, TheModelAsItIs) {
  Expected<std::string> text = ExportJson(HandMadeProfile(), nullptr);
  ASSERT_TRUE(text.ok());
  nlohmann::json doc = nlohmann::json::parse(*text);
  EXPECT_EQ(doc["summary"]["total_ns"], 600);
  EXPECT_EQ(doc["functions"][2]["name"], "leaf;semi");
  EXPECT_EQ(doc["call_graph"][1]["caller"], 1);
  EXPECT_EQ(doc["call_graph"][1]["callee"], 2);
  EXPECT_EQ(doc["call_graph"][1]["calls"], 2);
  EXPECT_EQ(doc["lines"][2]["line"], 12);
  EXPECT_TRUE(doc["heap"].is_null());
}

TEST(Speedscope, AProfilePerThreadFromTheStacks) {
  Expected<std::string> text = ExportSpeedscope(HandMadeProfile());
  ASSERT_TRUE(text.ok());
  nlohmann::json doc = nlohmann::json::parse(*text);
  ASSERT_EQ(doc["profiles"].size(), 2u);
  EXPECT_EQ(doc["profiles"][0]["name"], "main (thread 1)");
  EXPECT_EQ(doc["profiles"][0]["samples"], nlohmann::json::parse("[[0,1,2],[0,1]]"));
  EXPECT_EQ(doc["profiles"][0]["weights"], nlohmann::json::parse("[300,100]"));
  EXPECT_EQ(doc["profiles"][0]["endValue"], 400);
  EXPECT_EQ(doc["profiles"][1]["name"], "thread 2");
  EXPECT_EQ(doc["shared"]["frames"][2]["name"], "leaf;semi");
}

// A trace's begin and end events, each as `B<name>@<µs> ` or `E<name>@<µs> `.
std::string BeginsAndEnds(const std::string& trace) {
  nlohmann::json doc = nlohmann::json::parse(trace);
  std::string events;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "B" || e["ph"] == "E")
      events += fmt::format("{}{}@{} ", e["ph"].get<std::string>(), e["name"].get<std::string>(),
                            e["ts"].get<double>());
  return events;
}

TEST(Chrome, SpansFromTheSamplesInTimeOrder) {
  model::Profile p = HandMadeProfile();
  p.summary.first_time = 1000;
  // Thread 1: leaf at 1000, main/work at 1100, then a gap; leaf again at 5000.
  auto sample = [](uint64_t time, uint32_t stack) {
    model::Sample s;
    s.tid = 1;
    s.time = time;
    s.ns = 100;
    s.stack = model::StackId(stack);
    return s;
  };
  p.samples = {sample(1000, 0), sample(1100, 2), sample(5000, 0)};
  Expected<std::string> text = ExportChrome(p);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(BeginsAndEnds(*text),
            "Bmain@0 Bwork@0 Bleaf;semi@0 Eleaf;semi@0.1 Ework@0.2 Emain@0.2 "
            "Bmain@4 Bwork@4 Bleaf;semi@4 Eleaf;semi@4.1 Ework@4.1 Emain@4.1 ");
}

// leaf under work, then leaf right under main: the new leaf begins a nanosecond after the old
// one ends, or speedscope, which takes a begin before an end of one name at one time, would end
// work while the new leaf is open (it did, on a real profile: [kernel] under clock_gettime,
// then under the loop calling it).
TEST(Chrome, AFrameBegunWhereOneOfItsNameEndedBeginsANanosecondLater) {
  model::Profile p = HandMadeProfile();
  p.summary.first_time = 1000;
  p.addStack(std::vector<model::StackFrame>{{model::FunctionId(0u), model::LineId(0u), 0x10},
                                            {model::FunctionId(2u), model::LineId(2u), 0x30}});
  // stack 3: main, leaf
  model::Sample under_work, under_main;
  under_work.tid = under_main.tid = 1;
  under_work.ns = under_main.ns = 100;
  under_work.time = 1000;
  under_work.stack = model::StackId(0u);
  under_main.time = 1100;
  under_main.stack = model::StackId(3u);
  p.samples = {under_work, under_main};
  Expected<std::string> text = ExportChrome(p);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(BeginsAndEnds(*text),
            "Bmain@0 Bwork@0 Bleaf;semi@0 Eleaf;semi@0.1 Ework@0.1 Bleaf;semi@0.101 "
            "Eleaf;semi@0.2 Emain@0.2 ");
}

TEST(Chrome, NeedsKeptSamples) {
  Expected<std::string> out = ExportChrome(HandMadeProfile());
  EXPECT_FALSE(out.ok());
}

std::string TempDir() {
  std::string pattern = std::filesystem::temp_directory_path().string() + "/export-unit-XXXXXX";
  return mkdtemp(pattern.data());
}

size_t FilesIn(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(WriteFileAtomically, ReplacesTheFileWhole) {
  std::string dir = TempDir();
  std::string path = dir + "/out";
  std::ofstream(path) << "old";
  ASSERT_TRUE(WriteFileAtomically(path, "new contents").ok());
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_EQ(s.str(), "new contents");
  EXPECT_EQ(FilesIn(dir), 1u);
  std::filesystem::remove_all(dir);
}

TEST(WriteFileAtomically, FailsInAMissingDirectoryNamingThePath) {
  Status s = WriteFileAtomically("/nonexistent-dir/out", "x");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "/nonexistent-dir/out: No such file or directory");
}

TEST(WriteFileAtomically, ARenameThatFailsLeavesNoTemporary) {
  // OUT is a directory: the temporary is written, the rename fails, the temporary goes.
  std::string dir = TempDir();
  std::filesystem::create_directory(dir + "/out");
  Status s = WriteFileAtomically(dir + "/out", "x");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(FilesIn(dir), 1u);
  std::filesystem::remove_all(dir);
}

TEST(Formats, KnownByName) {
  EXPECT_EQ(FormatNamed("pprof"), Format::kPprof);
  EXPECT_EQ(FormatNamed("flamegraph"), std::nullopt);
  EXPECT_EQ(KnownFormatNames(), "pprof, callgrind, folded, chrome, speedscope, json");
}

}  // namespace
}  // namespace hotline::exporter

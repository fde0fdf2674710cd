// Tests of the symbolizer against programs compiled for it (see CMakeLists.txt). The expected
// answers come from elsewhere than the code under test: symbol addresses from the inputs' symbol
// tables (libelf), line numbers from "LINE: name" markers in the sources, and rows of the raw
// line table (libdw's line-table reader, not its scope lookup).
#include "symbolize/symbolizer.h"

#include <dlfcn.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>
#include "../../symbol_cache_off.h"

namespace hotline::symbolize {
namespace {

namespace fs = std::filesystem;

std::string basename(const std::string& path) { return fs::path(path).filename().string(); }

// The line number of the source line carrying the marker "LINE: name".
uint32_t markerLine(const std::string& file, const std::string& name) {
  std::ifstream in(file);
  EXPECT_TRUE(in) << "cannot read " << file;
  std::string text;
  const std::string marker = "LINE: " + name;
  for (uint32_t number = 1; std::getline(in, text); ++number) {
    size_t at = text.find(marker);
    if (at == std::string::npos) continue;
    size_t after = at + marker.size();
    if (after == text.size() ||
        !(std::isalnum(static_cast<unsigned char>(text[after])) || text[after] == '_')) {
      return number;
    }
  }
  ADD_FAILURE() << "no marker " << marker << " in " << file;
  return 0;
}

std::string input(const std::string& name) { return std::string(SYM_INPUTS_DIR) + "/" + name; }

struct Symbol {
  std::string name;
  std::string file;  // the STT_FILE symbol its local group follows ("" for globals)
  uint64_t value = 0;
  uint64_t size = 0;
};

// What the test needs from an ELF file, read with libelf: type, build-id, function symbols.
struct ElfFacts {
  bool ok = false;
  uint16_t type = 0;
  std::string build_id;
  std::vector<Symbol> functions;
  uint64_t text_start = 0;
  uint64_t text_size = 0;

  const Symbol* find(const std::string& name, const std::string& file = "") const {
    for (const Symbol& s : functions) {
      if (s.name == name && (file.empty() || s.file == file)) return &s;
    }
    return nullptr;
  }
  const Symbol* findContaining(const std::string& part) const {
    for (const Symbol& s : functions) {
      if (s.name.find(part) != std::string::npos) return &s;
    }
    return nullptr;
  }
};

ElfFacts readElf(const std::string& path) {
  ElfFacts facts;
  elf_version(EV_CURRENT);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return facts;
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  GElf_Ehdr ehdr;
  if (elf == nullptr || gelf_getehdr(elf, &ehdr) == nullptr) {
    if (elf != nullptr) elf_end(elf);
    close(fd);
    return facts;
  }
  facts.type = ehdr.e_type;
  size_t shstrndx = 0;
  elf_getshdrstrndx(elf, &shstrndx);
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    const char* section_name = elf_strptr(elf, shstrndx, shdr.sh_name);
    if (section_name != nullptr && std::string(section_name) == ".text") {
      facts.text_start = shdr.sh_addr;
      facts.text_size = shdr.sh_size;
    }
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) continue;
    if (shdr.sh_type == SHT_NOTE) {
      GElf_Nhdr note;
      size_t offset = 0, name_offset = 0, desc_offset = 0;
      while ((offset = gelf_getnote(data, offset, &note, &name_offset, &desc_offset)) > 0) {
        if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
            std::string(static_cast<const char*>(data->d_buf) + name_offset, 3) == "GNU") {
          facts.build_id.assign(static_cast<const char*>(data->d_buf) + desc_offset, note.n_descsz);
        }
      }
    }
    if (shdr.sh_type == SHT_SYMTAB) {
      std::string current_file;
      size_t count = shdr.sh_entsize == 0 ? 0 : shdr.sh_size / shdr.sh_entsize;
      for (size_t i = 0; i < count; ++i) {
        GElf_Sym sym;
        if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
        const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
        if (name == nullptr) continue;
        if (GELF_ST_TYPE(sym.st_info) == STT_FILE) current_file = name;
        if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF) continue;
        bool local = GELF_ST_BIND(sym.st_info) == STB_LOCAL;
        facts.functions.push_back({name, local ? current_file : "", sym.st_value, sym.st_size});
      }
    }
  }
  facts.ok = true;
  elf_end(elf);
  close(fd);
  return facts;
}

struct LineRow {
  uint64_t address;
  std::string file;
  int line;
};

// Every row of every line table of the file, read directly (no scope lookup involved).
std::vector<LineRow> lineRows(const std::string& path) {
  std::vector<LineRow> rows;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return rows;
  Dwarf* dwarf = dwarf_begin(fd, DWARF_C_READ);
  if (dwarf != nullptr) {
    Dwarf_Off offset = 0, next = 0;
    size_t header_size = 0;
    while (dwarf_nextcu(dwarf, offset, &next, &header_size, nullptr, nullptr, nullptr) == 0) {
      Dwarf_Die cu;
      Dwarf_Lines* lines = nullptr;
      size_t count = 0;
      if (dwarf_offdie(dwarf, offset + header_size, &cu) != nullptr &&
          dwarf_getsrclines(&cu, &lines, &count) == 0) {
        for (size_t i = 0; i < count; ++i) {
          Dwarf_Line* line = dwarf_onesrcline(lines, i);
          Dwarf_Addr address = 0;
          int number = 0;
          const char* file = dwarf_linesrc(line, nullptr, nullptr);
          if (dwarf_lineaddr(line, &address) == 0 && dwarf_lineno(line, &number) == 0 &&
              file != nullptr) {
            rows.push_back({address, file, number});
          }
        }
      }
      offset = next;
    }
    dwarf_end(dwarf);
  }
  close(fd);
  return rows;
}

// An address in [low, high) whose only line-table row says `file_base`:`line`.
std::optional<uint64_t> addressAtLine(const std::vector<LineRow>& rows, uint64_t low, uint64_t high,
                                      const std::string& file_base, int line) {
  std::map<uint64_t, std::vector<const LineRow*>> by_address;
  for (const LineRow& row : rows) {
    if (row.address >= low && row.address < high) by_address[row.address].push_back(&row);
  }
  for (const auto& [address, at] : by_address) {
    bool all_match = std::all_of(at.begin(), at.end(), [&](const LineRow* r) {
      return basename(r->file) == file_base && r->line == line;
    });
    if (all_match) return address;
  }
  return std::nullopt;
}

// The line the line table gives the instruction at `address`: the last row at the greatest
// row address not above it (rows sharing an address cover nothing but the last). A plain
// reimplementation, independent of the symbolizer's lookup.
int lineOfAddress(const std::vector<LineRow>& rows, uint64_t address) {
  const LineRow* best = nullptr;
  for (const LineRow& row : rows) {
    if (row.address <= address && (best == nullptr || row.address >= best->address)) best = &row;
  }
  return best == nullptr ? 0 : best->line;
}

// Loading biases the tests choose: a PIE or shared object may sit anywhere, an ET_EXEC only at 0.
uint64_t biasFor(const ElfFacts& facts) { return facts.type == ET_DYN ? 0x7f1234500000 : 0; }

bool hasWarning(const Symbolizer& s, const std::string& text) {
  for (const std::string& w : s.warnings()) {
    if (w.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string allWarnings(const Symbolizer& s) {
  std::string out;
  for (const std::string& w : s.warnings()) out += w + "\n";
  return out;
}

std::string describe(const ResolvedAddress& r) {
  std::ostringstream out;
  out << r.module << "+0x" << std::hex << r.module_address << std::dec << ":";
  for (const ResolvedFrame& f : r.frames) {
    out << "\n  " << f.function << " " << f.file << ":" << f.line << " (decl " << f.decl_file << ":"
        << f.decl_line << ", source " << static_cast<int>(f.source) << ")";
  }
  return out.str();
}

class SymbolizerC : public ::testing::Test {
 protected:
  void SetUp() override {
    facts_ = readElf(SYM_LIB_C);
    ASSERT_TRUE(facts_.ok) << SYM_LIB_C;
    module_ = {SYM_LIB_C, facts_.build_id, biasFor(facts_)};
  }
  ElfFacts facts_;
  ModuleInfo module_;
  Symbolizer symbolizer_;
};

TEST_F(SymbolizerC, FunctionEntryHasItsLineAndDefinition) {
  const Symbol* helper = facts_.find("helper", "same_a.c");
  ASSERT_NE(helper, nullptr);
  const ResolvedAddress& r = symbolizer_.resolve(module_, module_.bias + helper->value, false);
  SCOPED_TRACE(describe(r));
  EXPECT_EQ(r.module, SYM_LIB_C);
  EXPECT_EQ(r.module_address, helper->value);
  ASSERT_EQ(r.frames.size(), 1u);
  const ResolvedFrame& f = r.frames[0];
  EXPECT_EQ(f.function, "helper");
  EXPECT_EQ(basename(f.file), "same_a.c");
  EXPECT_TRUE(fs::path(f.file).is_absolute()) << f.file;
  const uint32_t decl = markerLine(input("same_a.c"), "helper_a");
  // At -O2 the entry may already be the body's first statement: the line table decides.
  EXPECT_EQ(f.line, static_cast<uint32_t>(lineOfAddress(lineRows(SYM_LIB_C), helper->value)));
  EXPECT_GE(f.line, decl);
  EXPECT_LE(f.line, decl + 1);
  EXPECT_EQ(f.decl_line, decl);
  EXPECT_EQ(basename(f.decl_file), "same_a.c");
  EXPECT_EQ(f.source, FrameSource::kDwarf);
  EXPECT_TRUE(symbolizer_.warnings().empty()) << allWarnings(symbolizer_);
}

TEST_F(SymbolizerC, EveryAddressOfAFunctionEndsInIt) {
  // sym_caller starts with inlined code at -O2; every byte of it still has sym_caller as its
  // real function, with the line the line table gives.
  const Symbol* caller = facts_.find("sym_caller");
  ASSERT_NE(caller, nullptr);
  const std::vector<LineRow> rows = lineRows(SYM_LIB_C);
  const uint32_t first = markerLine(input("inline.c"), "square_sum_decl");
  const uint32_t last = markerLine(input("inline.c"), "caller_decl") + 3;
  for (uint64_t offset = 0; offset < caller->size; ++offset) {
    const ResolvedAddress& r =
        symbolizer_.resolve(module_, module_.bias + caller->value + offset, false);
    SCOPED_TRACE(describe(r));
    ASSERT_FALSE(r.frames.empty());
    EXPECT_EQ(r.frames.back().function, "sym_caller");
    EXPECT_EQ(r.frames.back().decl_line, markerLine(input("inline.c"), "caller_decl"));
    EXPECT_EQ(r.frames.front().line,
              static_cast<uint32_t>(lineOfAddress(rows, caller->value + offset)));
    for (const ResolvedFrame& f : r.frames) {
      EXPECT_EQ(basename(f.file), "inline.c");
      if (f.line != 0) {
        EXPECT_GE(f.line, first);
        EXPECT_LE(f.line, last);
      }
    }
  }
}

TEST_F(SymbolizerC, InlinedFunctionShowsChainWithCallLine) {
  const Symbol* caller = facts_.find("sym_caller");
  ASSERT_NE(caller, nullptr);
  const int body = static_cast<int>(markerLine(input("inline.c"), "square_sum_body"));
  std::optional<uint64_t> address = addressAtLine(lineRows(SYM_LIB_C), caller->value,
                                                  caller->value + caller->size, "inline.c", body);
  ASSERT_TRUE(address) << "no code of line " << body << " inside sym_caller";
  const ResolvedAddress& r = symbolizer_.resolve(module_, module_.bias + *address, false);
  SCOPED_TRACE(describe(r));
  ASSERT_EQ(r.frames.size(), 2u);
  EXPECT_EQ(r.frames[0].function, "sym_square_sum");
  EXPECT_EQ(r.frames[0].source, FrameSource::kInline);
  EXPECT_EQ(basename(r.frames[0].file), "inline.c");
  EXPECT_EQ(r.frames[0].line, static_cast<uint32_t>(body));
  EXPECT_EQ(r.frames[0].decl_line, markerLine(input("inline.c"), "square_sum_decl"));
  EXPECT_EQ(r.frames[1].function, "sym_caller");
  EXPECT_EQ(r.frames[1].source, FrameSource::kDwarf);
  EXPECT_EQ(basename(r.frames[1].file), "inline.c");
  EXPECT_EQ(r.frames[1].line, markerLine(input("inline.c"), "caller_call"));
  EXPECT_EQ(r.frames[1].decl_line, markerLine(input("inline.c"), "caller_decl"));
}

TEST_F(SymbolizerC, SameStaticNameInTwoFilesResolvesToEach) {
  const Symbol* a = facts_.find("helper", "same_a.c");
  const Symbol* b = facts_.find("helper", "same_b.c");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_NE(a->value, b->value);
  const ResolvedAddress& ra = symbolizer_.resolve(module_, module_.bias + a->value, false);
  const ResolvedAddress& rb = symbolizer_.resolve(module_, module_.bias + b->value, false);
  SCOPED_TRACE(describe(ra) + "\n" + describe(rb));
  ASSERT_EQ(ra.frames.size(), 1u);
  ASSERT_EQ(rb.frames.size(), 1u);
  EXPECT_EQ(ra.frames[0].function, "helper");
  EXPECT_EQ(rb.frames[0].function, "helper");
  EXPECT_EQ(basename(ra.frames[0].decl_file), "same_a.c");
  EXPECT_EQ(basename(rb.frames[0].decl_file), "same_b.c");
  EXPECT_EQ(basename(ra.frames[0].file), "same_a.c");
  EXPECT_EQ(basename(rb.frames[0].file), "same_b.c");
  EXPECT_EQ(ra.frames[0].decl_line, markerLine(input("same_a.c"), "helper_a"));
  EXPECT_EQ(rb.frames[0].decl_line, markerLine(input("same_b.c"), "helper_b"));
}

TEST_F(SymbolizerC, ReturnAddressMapsToTheCallLine) {
  // A real return address: the library is loaded and its probe reports where it will return.
  void* handle = dlopen(SYM_LIB_C, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto probe = reinterpret_cast<void* (*)()>(dlsym(handle, "sym_probe"));
  ASSERT_NE(probe, nullptr);
  link_map* map = nullptr;
  ASSERT_EQ(dlinfo(handle, RTLD_DI_LINKMAP, &map), 0);
  const uint64_t return_address = reinterpret_cast<uint64_t>(probe());
  const ModuleInfo loaded{SYM_LIB_C, facts_.build_id, map->l_addr};
  const ResolvedAddress& r = symbolizer_.resolve(loaded, return_address, true);
  SCOPED_TRACE(describe(r));
  EXPECT_EQ(r.module_address, return_address - map->l_addr);
  ASSERT_EQ(r.frames.size(), 1u);
  EXPECT_EQ(r.frames[0].function, "sym_probe");
  EXPECT_EQ(r.frames[0].line, markerLine(input("inline.c"), "probe_call"));
  EXPECT_EQ(r.frames[0].decl_line, markerLine(input("inline.c"), "probe_decl"));
  // The same address taken as an interrupted instruction is another cache entry, still inside
  // the probe; it must not be served the return-address answer by mistake or vice versa.
  const ResolvedAddress& as_pc = symbolizer_.resolve(loaded, return_address, false);
  EXPECT_NE(&as_pc, &r);
  ASSERT_FALSE(as_pc.frames.empty());
  EXPECT_EQ(as_pc.frames.back().function, "sym_probe");
  dlclose(handle);
}

TEST_F(SymbolizerC, EachAddressIsResolvedOnceAndKept) {
  const Symbol* caller = facts_.find("sym_caller");
  ASSERT_NE(caller, nullptr);
  const ResolvedAddress& first = symbolizer_.resolve(module_, module_.bias + caller->value, false);
  for (uint64_t i = 1; i < caller->size; ++i) {
    symbolizer_.resolve(module_, module_.bias + caller->value + i, false);
  }
  const ResolvedAddress& again = symbolizer_.resolve(module_, module_.bias + caller->value, false);
  EXPECT_EQ(&first, &again);
  ASSERT_FALSE(first.frames.empty());
  EXPECT_EQ(first.frames.back().function, "sym_caller");
}

TEST_F(SymbolizerC, BuildIdMismatchWarnsAndStillResolves) {
  ModuleInfo rebuilt = module_;
  rebuilt.build_id = std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8);
  const Symbol* a = facts_.find("helper", "same_a.c");
  ASSERT_NE(a, nullptr);
  const ResolvedAddress& r = symbolizer_.resolve(rebuilt, rebuilt.bias + a->value, false);
  ASSERT_EQ(r.frames.size(), 1u);
  EXPECT_EQ(r.frames[0].function, "helper");
  const std::string expected = std::string(SYM_LIB_C) +
                               ": build-id differs from the profiled binary (rebuilt since the "
                               "run?); its symbols may be wrong";
  ASSERT_EQ(symbolizer_.warnings().size(), 1u) << allWarnings(symbolizer_);
  EXPECT_EQ(symbolizer_.warnings()[0], expected);
  // The matching build-id is a different module entry and raises nothing new.
  symbolizer_.resolve(module_, module_.bias + a->value, false);
  EXPECT_EQ(symbolizer_.warnings().size(), 1u) << allWarnings(symbolizer_);
}

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/hotline-symbolize-XXXXXX";
    const char* made = mkdtemp(pattern);
    EXPECT_NE(made, nullptr);
    path_ = made == nullptr ? "/tmp" : made;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name, const std::string& bytes) const {
    std::string p = path_ + "/" + name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }

 private:
  std::string path_;
};

struct Loaded {
  std::string path;
  uint64_t bias = 0;
};

std::optional<Loaded> loadedModule(const std::string& name_part) {
  struct Search {
    std::string part;
    std::optional<Loaded> found;
  } search{name_part, std::nullopt};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        std::string name = info->dlpi_name == nullptr ? "" : info->dlpi_name;
        if (!s->found && name.find(s->part) != std::string::npos) {
          s->found = Loaded{name, info->dlpi_addr};
        }
        return 0;
      },
      &search);
  return search.found;
}

// The answer for helper() in same_a.c with full DWARF, whichever file the DWARF came from.
void expectHelperWithLines(Symbolizer& symbolizer, const std::string& path) {
  ElfFacts facts = readElf(SYM_LIB_C);
  const Symbol* a = facts.find("helper", "same_a.c");
  ASSERT_NE(a, nullptr);
  ModuleInfo module{path, facts.build_id, biasFor(facts)};
  const ResolvedAddress& r = symbolizer.resolve(module, module.bias + a->value, false);
  SCOPED_TRACE(describe(r));
  ASSERT_EQ(r.frames.size(), 1u);
  EXPECT_EQ(r.frames[0].function, "helper");
  EXPECT_EQ(r.frames[0].source, FrameSource::kDwarf);
  EXPECT_EQ(basename(r.frames[0].file), "same_a.c");
  EXPECT_EQ(r.frames[0].decl_line, markerLine(input("same_a.c"), "helper_a"));
  EXPECT_TRUE(symbolizer.warnings().empty()) << allWarnings(symbolizer);
}

TEST(SymbolizerDebugFiles, FoundThroughGnuDebuglink) {
  Symbolizer symbolizer;
  expectHelperWithLines(symbolizer, std::string(SYM_OUT_DIR) + "/debuglink/libsym_c.so");
}

TEST(SymbolizerDebugFiles, FoundByBuildIdUnderAConfiguredDirectory) {
  ElfFacts facts = readElf(SYM_LIB_C);
  ASSERT_GE(facts.build_id.size(), 2u);
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : facts.build_id) {
    hex += kHex[c >> 4];
    hex += kHex[c & 15];
  }
  TempDir root;
  fs::create_directories(root.path() + "/.build-id/" + hex.substr(0, 2));
  fs::copy_file(std::string(SYM_OUT_DIR) + "/debuglink/libsym_c.debug",
                root.path() + "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug");
  // The stripped copy without a debuglink, in a directory holding no debug file.
  const std::string stripped = std::string(SYM_OUT_DIR) + "/libsym_c.nodebug.so";
  {
    SymbolizerOptions options;
    options.debug_dirs = {"/nonexistent/hotline-debug", root.path()};
    Symbolizer symbolizer(options);
    expectHelperWithLines(symbolizer, stripped);
  }
  {
    // The same without the directory: the debug file is not found (the control experiment).
    Symbolizer symbolizer;
    ModuleInfo module{stripped, facts.build_id, 0};
    symbolizer.resolve(module, facts.find("helper", "same_a.c")->value, false);
    EXPECT_TRUE(hasWarning(symbolizer, "no debug info")) << allWarnings(symbolizer);
  }
}

TEST(SymbolizerDebugFiles, SystemLibcUsesUsrLibDebug) {
  std::optional<Loaded> libc = loadedModule("libc.so.6");
  ASSERT_TRUE(libc);
  ElfFacts facts = readElf(libc->path);
  ASSERT_GE(facts.build_id.size(), 2u);
  std::string hex;
  static const char kHex[] = "0123456789abcdef";
  for (unsigned char c : facts.build_id) {
    hex += kHex[c >> 4];
    hex += kHex[c & 15];
  }
  const std::string debug_file =
      "/usr/lib/debug/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug";
  if (!fs::exists(debug_file)) GTEST_SKIP() << "libc6-dbg not installed (" << debug_file << ")";
  Symbolizer symbolizer;
  ModuleInfo module{libc->path, facts.build_id, libc->bias};
  const ResolvedAddress& r =
      symbolizer.resolve(module, reinterpret_cast<uint64_t>(dlsym(RTLD_DEFAULT, "abs")), false);
  SCOPED_TRACE(describe(r));
  ASSERT_FALSE(r.frames.empty());
  EXPECT_EQ(r.frames.back().function, "abs");
  EXPECT_NE(r.frames.front().line, 0u);
  EXPECT_EQ(basename(r.frames.back().decl_file), "abs.c");
  EXPECT_TRUE(symbolizer.warnings().empty()) << allWarnings(symbolizer);
}

TEST(Symbolizer, AddressOutsideTheModuleResolvesToNothing) {
  ElfFacts facts = readElf(SYM_LIB_C);
  Symbolizer symbolizer;
  ModuleInfo module{SYM_LIB_C, facts.build_id, 0x7f0000000000};
  // Below the bias (wraps to a huge address) and far above the mapped segments.
  EXPECT_TRUE(symbolizer.resolve(module, 0x1000, false).frames.empty());
  EXPECT_TRUE(symbolizer.resolve(module, 0x7f0000000000 + (1ull << 32), false).frames.empty());
  EXPECT_TRUE(symbolizer.warnings().empty()) << allWarnings(symbolizer);
}

TEST(Symbolizer, CxxTemplateMethodDemangles) {
  ElfFacts facts = readElf(SYM_LIB_CXX);
  ASSERT_TRUE(facts.ok);
  const Symbol* scaled = facts.find("_ZNK3geo3BoxIdE6scaledEi");
  ASSERT_NE(scaled, nullptr);
  Symbolizer symbolizer;
  ModuleInfo module{SYM_LIB_CXX, facts.build_id, biasFor(facts)};
  const ResolvedAddress& r = symbolizer.resolve(module, module.bias + scaled->value, false);
  SCOPED_TRACE(describe(r));
  ASSERT_EQ(r.frames.size(), 1u);
  EXPECT_EQ(r.frames[0].function, "geo::Box<double>::scaled(int) const");
  EXPECT_EQ(basename(r.frames[0].file), "templates.cc");
  EXPECT_EQ(r.frames[0].decl_line, markerLine(input("templates.cc"), "scaled_decl"));
  EXPECT_EQ(r.frames[0].line,
            static_cast<uint32_t>(lineOfAddress(lineRows(SYM_LIB_CXX), scaled->value)));
  EXPECT_GE(r.frames[0].line, markerLine(input("templates.cc"), "scaled_decl"));
  EXPECT_LE(r.frames[0].line, markerLine(input("templates.cc"), "scaled_body"));
  EXPECT_EQ(r.frames[0].source, FrameSource::kDwarf);
}

TEST(Symbolizer, WithoutDebugInfoGivesSymbolsAndWarns) {
  const std::string path = std::string(SYM_OUT_DIR) + "/libsym_c.nodebug.so";
  // strip --strip-debug drops the STT_FILE symbols too, so addresses come from the unstripped
  // twin (same layout); the stripped copy must still have its own "helper" symbols.
  ElfFacts facts = readElf(SYM_LIB_C);
  ASSERT_TRUE(facts.ok);
  const Symbol* a = facts.find("helper", "same_a.c");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(readElf(path).find("helper"), nullptr);
  Symbolizer symbolizer;
  ModuleInfo module{path, facts.build_id, biasFor(facts)};
  const ResolvedAddress& r = symbolizer.resolve(module, module.bias + a->value + 1, false);
  SCOPED_TRACE(describe(r));
  ASSERT_EQ(r.frames.size(), 1u);
  EXPECT_EQ(r.frames[0].function, "helper");
  EXPECT_EQ(r.frames[0].file, "");
  EXPECT_EQ(r.frames[0].line, 0u);
  EXPECT_EQ(r.frames[0].source, FrameSource::kSymbolTable);
  ASSERT_EQ(symbolizer.warnings().size(), 1u) << allWarnings(symbolizer);
  EXPECT_EQ(symbolizer.warnings()[0], path + ": no debug info; functions only, no lines");
}

TEST(Symbolizer, FullyStrippedLibraryKeepsOnlyExportedNames) {
  const std::string path = std::string(SYM_OUT_DIR) + "/libsym_c.stripped.so";
  ElfFacts full = readElf(SYM_LIB_C);  // addresses from the unstripped twin: same layout
  const Symbol* caller = full.find("sym_caller");
  ASSERT_NE(caller, nullptr);
  ASSERT_TRUE(readElf(path).functions.empty()) << "strip --strip-all left a .symtab";
  Symbolizer symbolizer;
  ModuleInfo module{path, full.build_id, biasFor(full)};
  const ResolvedAddress& r = symbolizer.resolve(module, module.bias + caller->value + 2, false);
  SCOPED_TRACE(describe(r));
  ASSERT_EQ(r.frames.size(), 1u);
  EXPECT_EQ(r.frames[0].function, "sym_caller");  // from .dynsym
  EXPECT_EQ(r.frames[0].source, FrameSource::kSymbolTable);
  EXPECT_TRUE(hasWarning(symbolizer, path + ": no debug info; functions only, no lines"))
      << allWarnings(symbolizer);
}

TEST(Symbolizer, FullyStrippedExecutableResolvesNothing) {
  const std::string path = std::string(SYM_OUT_DIR) + "/sym_exe.stripped";
  ElfFacts full = readElf(SYM_EXE);
  const Symbol* work = full.find("sym_exe_work");
  ASSERT_NE(work, nullptr);
  Symbolizer symbolizer;
  ModuleInfo module{path, full.build_id, biasFor(full)};
  const ResolvedAddress& r = symbolizer.resolve(module, module.bias + work->value, false);
  SCOPED_TRACE(describe(r));
  EXPECT_TRUE(r.frames.empty());
  EXPECT_EQ(r.module_address, work->value);
  ASSERT_EQ(symbolizer.warnings().size(), 1u) << allWarnings(symbolizer);
  EXPECT_EQ(symbolizer.warnings()[0], path + ": no debug info and no symbols; addresses only");
}

TEST(Symbolizer, UnstrippedExecutableAsPie) {
  ElfFacts facts = readElf(SYM_EXE);
  const Symbol* work = facts.find("sym_exe_work");
  ASSERT_NE(work, nullptr);
  Symbolizer symbolizer;
  ModuleInfo module{SYM_EXE, facts.build_id, biasFor(facts)};
  const ResolvedAddress& r = symbolizer.resolve(module, module.bias + work->value, false);
  SCOPED_TRACE(describe(r));
  ASSERT_EQ(r.frames.size(), 1u);
  EXPECT_EQ(r.frames[0].function, "sym_exe_work");
  EXPECT_EQ(r.frames[0].decl_line, markerLine(input("main.c"), "exe_work_decl"));
  EXPECT_EQ(r.frames[0].line, static_cast<uint32_t>(lineOfAddress(lineRows(SYM_EXE), work->value)));
}

// The PLT stubs objdump names (`printf@plt`), by address: objdump is the independent truth.
std::map<uint64_t, std::string> PltStubs(const std::string& path) {
  std::map<uint64_t, std::string> stubs;
  std::string command = "objdump -d -C -j .plt -j .plt.sec -j .plt.got '" + path + "' 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return stubs;
  char text[4096];
  while (fgets(text, sizeof text, pipe)) {
    std::string line(text);
    size_t open = line.find(" <"), close = line.rfind("@plt>:");
    if (open == std::string::npos || close == std::string::npos || close < open) continue;
    stubs[std::stoull(line.substr(0, open), nullptr, 16)] = line.substr(open + 2, close + 2 - open);
  }
  pclose(pipe);
  return stubs;
}

TEST(Symbolizer, PltStubsAreNamedAfterTheirFunction) {
  for (const char* path : {SYM_EXE, SYM_LIB_CXX}) {
    std::map<uint64_t, std::string> stubs = PltStubs(path);
    ASSERT_GE(stubs.size(), 1u) << path << ": objdump found no PLT stubs";
    ElfFacts facts = readElf(path);
    Symbolizer symbolizer;
    ModuleInfo module{path, facts.build_id, biasFor(facts)};
    for (const auto& [address, name] : stubs) {
      // An address inside the stub, past its first instruction.
      const ResolvedAddress& r = symbolizer.resolve(module, module.bias + address + 6, false);
      ASSERT_EQ(r.frames.size(), 1u) << path << " " << name;
      EXPECT_EQ(r.frames[0].function, name) << path;
    }
  }
}

TEST(Symbolizer, MissingFileWarnsOnceAndResolvesNothing) {
  Symbolizer symbolizer;
  const std::string path = "/nonexistent/hotline/libgone.so";
  ModuleInfo module{path, "", 0x10000};
  for (uint64_t address = 0x10000; address < 0x10100; ++address) {
    const ResolvedAddress& r = symbolizer.resolve(module, address, address % 2 == 0);
    EXPECT_TRUE(r.frames.empty());
    EXPECT_EQ(r.module, path);
    EXPECT_EQ(r.module_address, address - 0x10000);
  }
  ASSERT_EQ(symbolizer.warnings().size(), 1u) << allWarnings(symbolizer);
  EXPECT_EQ(symbolizer.warnings()[0].rfind(path + ": cannot open", 0), 0u)
      << symbolizer.warnings()[0];
}

TEST(Symbolizer, SpecialModulesResolveToNothingWithoutWarnings) {
  Symbolizer symbolizer;
  for (const char* path : {"[vdso]", "linux-vdso.so.1", "", "[vsyscall]"}) {
    ModuleInfo module{path, "", 0x7fff00000000};
    for (uint64_t i = 0; i < 64; ++i) {
      EXPECT_TRUE(symbolizer.resolve(module, 0x7fff00000000 + i * 16, false).frames.empty());
    }
  }
  EXPECT_TRUE(symbolizer.warnings().empty()) << allWarnings(symbolizer);
}

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(Symbolizer, GarbageFileWarnsAndResolvesNothing) {
  TempDir dir;
  const std::string path = dir.file("libgarbage.so", std::string(4096, '\x5a'));
  Symbolizer symbolizer;
  ModuleInfo module{path, "", 0x400000};
  EXPECT_TRUE(symbolizer.resolve(module, 0x401000, false).frames.empty());
  EXPECT_TRUE(symbolizer.resolve(module, 0x401001, true).frames.empty());
  ASSERT_EQ(symbolizer.warnings().size(), 1u) << allWarnings(symbolizer);
  EXPECT_EQ(symbolizer.warnings()[0].rfind(path + ": not a usable ELF file", 0), 0u)
      << symbolizer.warnings()[0];
}

TEST(Symbolizer, TruncatedElfNeverCrashes) {
  const std::string whole = readBytes(SYM_LIB_C);
  ASSERT_GT(whole.size(), 4096u);
  ElfFacts facts = readElf(SYM_LIB_C);
  const Symbol* caller = facts.find("sym_caller");
  ASSERT_NE(caller, nullptr);
  TempDir dir;
  // Cut inside the ELF header, the program headers, the code, and the debug sections.
  for (size_t cut : {size_t{10}, size_t{64}, size_t{200}, size_t{4096}, whole.size() / 3,
                     whole.size() / 2, whole.size() - 100}) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    const std::string path = dir.file("libcut" + std::to_string(cut) + ".so", whole.substr(0, cut));
    Symbolizer symbolizer;
    ModuleInfo module{path, facts.build_id, 0x10000000};
    for (uint64_t offset = 0; offset < caller->size; offset += 3) {
      const ResolvedAddress& r =
          symbolizer.resolve(module, 0x10000000 + caller->value + offset, offset % 2 == 1);
      for (const ResolvedFrame& f : r.frames) EXPECT_FALSE(f.function.empty() && f.line == 0);
    }
    // Whatever could be read, a cut file is never taken as a whole one without a word.
    EXPECT_FALSE(symbolizer.warnings().empty());
    for (const std::string& w : symbolizer.warnings()) EXPECT_EQ(w.rfind(path + ": ", 0), 0u) << w;
  }
}

// File offset ranges of the .debug_* sections, where damage reaches the DWARF readers.
std::vector<std::pair<uint64_t, uint64_t>> debugSectionRanges(const std::string& path) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  elf_version(EV_CURRENT);  // libelf refuses to work before this, and tests run alone too
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ranges;
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  size_t shstrndx = 0;
  if (elf != nullptr && elf_getshdrstrndx(elf, &shstrndx) == 0) {
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_size == 0) continue;
      const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
      if (name != nullptr && std::string(name).rfind(".debug_", 0) == 0) {
        ranges.emplace_back(shdr.sh_offset, shdr.sh_offset + shdr.sh_size);
      }
    }
  }
  if (elf != nullptr) elf_end(elf);
  close(fd);
  return ranges;
}

TEST(Symbolizer, DamagedDebugInfoNeverCrashes) {
  // Seeded random damage to the DWARF sections (abbreviations, DIEs, line programs, strings,
  // range lists); every address of the library's code is resolved in every variant. This fails
  // by crashing, hanging or tripping the sanitizers of the asan preset.
  const std::string whole = readBytes(SYM_LIB_C);
  const auto ranges = debugSectionRanges(SYM_LIB_C);
  ASSERT_GE(ranges.size(), 3u);
  ElfFacts facts = readElf(SYM_LIB_C);
  ASSERT_GT(facts.text_size, 0u);
  TempDir dir;
  std::mt19937 random(20261122);
  for (int variant = 0; variant < 150; ++variant) {
    std::string damaged = whole;
    for (int flip = 0, flips = 1 + static_cast<int>(random() % 16); flip < flips; ++flip) {
      const auto& [begin, end] = ranges[random() % ranges.size()];
      damaged[begin + random() % (end - begin)] = static_cast<char>(random());
    }
    const std::string path = dir.file("libdamaged.so", damaged);
    Symbolizer symbolizer;
    ModuleInfo module{path, "", 0x40000000};
    for (uint64_t offset = 0; offset < facts.text_size; ++offset) {
      symbolizer.resolve(module, 0x40000000 + facts.text_start + offset, offset % 2 == 1);
    }
  }
}

// The other languages: a recursive function of theirs resolves to their own source file, a line
// inside the function, and the name as the language spells it.
void checkLanguage(const std::string& binary, const std::string& source,
                   const std::string& symbol_part, const std::string& expected_name) {
  ElfFacts facts = readElf(binary);
  ASSERT_TRUE(facts.ok) << binary;
  const Symbol* fib = facts.findContaining(symbol_part);
  ASSERT_NE(fib, nullptr) << "no symbol containing " << symbol_part << " in " << binary;
  ASSERT_GT(fib->size, 2u);
  const uint32_t begin = markerLine(input(source), "fib_begin");
  const uint32_t end = markerLine(input(source), "fib_end");
  Symbolizer symbolizer;
  ModuleInfo module{binary, facts.build_id, biasFor(facts)};
  for (uint64_t offset : {uint64_t{0}, fib->size / 2, fib->size - 1}) {
    const ResolvedAddress& r = symbolizer.resolve(module, module.bias + fib->value + offset, false);
    SCOPED_TRACE(describe(r));
    ASSERT_FALSE(r.frames.empty());
    const ResolvedFrame& f = r.frames.back();
    EXPECT_EQ(f.function, expected_name);
    EXPECT_EQ(f.source, FrameSource::kDwarf);
    EXPECT_EQ(basename(f.file), source);
    EXPECT_EQ(basename(f.decl_file), source);
    EXPECT_GE(f.line, begin);
    EXPECT_LE(f.line, end);
    EXPECT_GE(f.decl_line, begin);
    EXPECT_LE(f.decl_line, end);
  }
  EXPECT_TRUE(symbolizer.warnings().empty()) << allWarnings(symbolizer);
}

TEST(SymbolizerLanguages, Fortran) {
  if (std::string(SYM_FORTRAN_BIN).empty()) GTEST_SKIP() << "gfortran not found at configure time";
  checkLanguage(SYM_FORTRAN_BIN, "fib.f90", "__fibmod_MOD_fib", "fib");
}

TEST(SymbolizerLanguages, FortranWithLto) {
  if (std::string(SYM_FORTRAN_BIN).empty()) GTEST_SKIP() << "gfortran not found at configure time";
  checkLanguage(std::string(SYM_FORTRAN_BIN) + "_lto", "fib.f90", "__fibmod_MOD_fib", "fib");
}

TEST(SymbolizerLanguages, Pascal) {
  if (std::string(SYM_PASCAL_BIN).empty()) GTEST_SKIP() << "fpc not found at configure time";
  checkLanguage(SYM_PASCAL_BIN, "fib.pas", "_$$_FIB$", "FIB");
}

TEST(SymbolizerLanguages, Modula2) {
  if (std::string(SYM_M2_BIN).empty()) {
    GTEST_SKIP() << "gm2-12 or libm2iso.so.17 not found at configure time";
  }
  checkLanguage(SYM_M2_BIN, "fib.mod", "Fib", "Fib");
}

// A timing print, not a timing assertion: 100k distinct addresses through a large module.
// The assertions check that the answers are real (most addresses named), so the rate is the
// rate of actual work.
double percent(size_t part, size_t whole) {
  return 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

// `min_named_percent`: the share of .text addresses that must get a function name. With full
// symbol tables nearly all do; with .dynsym only, the unexported functions stay unnamed.
void benchmark(const std::string& path, uint64_t bias, size_t count, size_t min_named_percent) {
  ElfFacts facts = readElf(path);
  ASSERT_TRUE(facts.ok) << path;
  ASSERT_GE(facts.text_size, count) << path << ": .text smaller than the address count";
  Symbolizer symbolizer;
  ModuleInfo module{path, facts.build_id, bias};
  const uint64_t step = facts.text_size / count;
  size_t named = 0, with_line = 0, inlined = 0;
  auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < count; ++i) {
    const ResolvedAddress& r =
        symbolizer.resolve(module, bias + facts.text_start + i * step, i % 2 == 1);
    if (!r.frames.empty() && !r.frames.back().function.empty()) ++named;
    if (!r.frames.empty() && r.frames.front().line != 0) ++with_line;
    if (r.frames.size() > 1) ++inlined;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto again = std::chrono::steady_clock::now();
  for (size_t i = 0; i < count; ++i) {
    symbolizer.resolve(module, bias + facts.text_start + i * step, i % 2 == 1);
  }
  const double cached_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - again).count();
  std::printf(
      "[ rate     ] %s: %zu distinct addresses in %.3f s (%.0f/s); %.1f%% named, %.1f%% with a "
      "line, %.1f%% in inlined code; cached pass %.3f s\n",
      path.c_str(), count, seconds, static_cast<double>(count) / seconds, percent(named, count),
      percent(with_line, count), percent(inlined, count), cached_seconds);
  for (const std::string& w : symbolizer.warnings())
    std::printf("[ rate     ]   warning: %s\n", w.c_str());
  EXPECT_GE(named * 100, count * min_named_percent) << "too few addresses named";
}

TEST(SymbolizerBenchmark, LibcHundredThousandAddresses) {
  std::optional<Loaded> libc = loadedModule("libc.so.6");
  ASSERT_TRUE(libc);
  benchmark(libc->path, libc->bias, 100000, 90);
}

TEST(SymbolizerBenchmark, LibstdcxxHundredThousandAddresses) {
  std::optional<Loaded> libstdcxx = loadedModule("libstdc++.so.6");
  ASSERT_TRUE(libstdcxx);
  benchmark(libstdcxx->path, libstdcxx->bias, 100000, 50);
}

TEST(SymbolizerBenchmark, OwnTestBinaryHundredThousandAddresses) {
  // This binary: C++ with -O2 -g and GoogleTest inlined everywhere, so deep inline chains.
  std::optional<Loaded> self = loadedModule("");  // the first entry is the executable
  ASSERT_TRUE(self);
  benchmark(fs::read_symlink("/proc/self/exe").string(), self->bias, 100000, 90);
}

}  // namespace
}  // namespace hotline::symbolize

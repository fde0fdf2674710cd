// Names as perl programmers know them: files, subs (Pkg::sub, __ANON__[file:line], BEGIN@line),
// the frames and stack nodes built from them.
#include <cstdio>
#include <cstring>

#include "profiler.h"

namespace hotline::perl {

uint32_t FileIndex(const char* name) {
  auto it = g->file_by_name.find(std::string_view(name));
  if (it != g->file_by_name.end()) return it->second;
  // AutoSplit's files say where their subs were written (`#line 13 "x.pm (autosplit into
  // auto/x/foo.al)"`): their lines are the module's, as NYTProf counts them. A string eval's
  // name keeps where it was compiled as perl says it.
  const char* split =
      std::strncmp(name, "(eval ", 6) == 0 ? nullptr : std::strstr(name, " (autosplit into ");
  if (split && split != name) {
    uint32_t index = FileIndex(std::string(name, size_t(split - name)).c_str());
    g->file_by_name.emplace(name, index);
    return index;
  }
  uint32_t index = uint32_t(g->files.size());
  size_t len = std::strlen(name);
  bool own = len >= 17 && std::strcmp(name + len - 17, "/Devel/Hotline.pm") == 0;
  g->files.push_back(SourceFile{name, {}, false, own});
  g->file_by_name.emplace(name, index);
  return index;
}

// The text of a source that is in no file: perl keeps its lines in @{"_<NAME"} ($^P 0x400).
void CaptureSourceText(pTHX_ uint32_t file) {
  const std::string& name = g->files[file].name;
  bool in_no_file = name == "-e" || name.rfind("(eval ", 0) == 0;
  if (!in_no_file) return;
  GV* gv = gv_fetchfile_flags(name.c_str(), name.size(), 0);
  if (!gv || !GvAV(gv)) return;
  AV* lines = GvAV(gv);
  std::string text;
  for (SSize_t i = 1; i <= av_top_index(lines); ++i) {
    SV** sv = av_fetch(lines, i, 0);
    if (!sv || !SvOK(*sv)) {
      text += '\n';
      continue;
    }
    STRLEN len;
    const char* p = SvPV(*sv, len);
    text.append(p, len);
    if (len == 0 || p[len - 1] != '\n') text += '\n';
  }
  g->files[file].text = std::move(text);
}

namespace {

// The first statement line of a sub's body, for subs %DB::sub does not know.
uint64_t FirstLine(CV* cv) {
  int steps = 0;
  for (OP* o = CvSTART(cv); o && steps < 64; o = o->op_next, ++steps) {
    if (o->op_type == OP_NEXTSTATE || o->op_type == OP_DBSTATE) return CopLINE(cCOPx(o));
  }
  return 0;
}

std::string SubName(pTHX_ CV* cv) {
  std::string name;
  HV* stash = nullptr;
  if (CvNAMED(cv)) {
    HEK* hek = CvNAME_HEK(cv);
    name.assign(HEK_KEY(hek), HEK_LEN(hek));
    stash = CvSTASH(cv);
  } else if (GV* gv = CvGV(cv)) {
    name.assign(GvNAME(gv), GvNAMELEN(gv));
    stash = GvSTASH(gv);
  }
  if (name.empty()) name = "__ANON__";
  return PackageName(stash) + "::" + name;
}

// A CV a sub was seen as is freed (a BEGIN block once it ran, a string eval's sub once
// dropped): when nothing else holds its op tree, that memory may hold the next sub perl
// compiles, which must not take this one's name and calls. Another interpreter's copy of it
// (ithreads copy this magic with the CV) or a closure's clone shares the tree (its reference
// count, which this CV still holds here, is above one): the sub stays named.
int ForgetSub(pTHX_ SV* sv, MAGIC* mg) {
  if (!g) return 0;
  CV* cv = reinterpret_cast<CV*>(sv);
  OP* root = CvISXSUB(cv) ? nullptr : CvROOT(cv);
  Shared shared;
  uint32_t* found = g->sub_by_key.find(mg->mg_ptr);
  if (!found) return 0;
  // A root op keeps its tree's reference count in op_targ (OpREFCNT_set, op.h).
  if (root ? root->op_targ <= 1 : g->subs[*found].owner == sv) {
    g->sub_by_key.retire(mg->mg_ptr);
  } else if (g->subs[*found].owner == sv) {
    // What else holds the tree tells nobody when it goes (the prototype of a closure, or of
    // any anonymous sub under the debugger): the next CV seen with this key is checked.
    g->subs[*found].orphaned = true;
  }
  return 0;
}

MGVTBL forget_sub = {.svt_free = ForgetSub};

void WatchFree(pTHX_ CV* cv, const void* key) {
  // Magic with a free callback only: perl's use of the CV is as before. The key is kept as the
  // magic's pointer, not copied (length 0).
  sv_magicext(reinterpret_cast<SV*>(cv), nullptr, PERL_MAGIC_ext, &forget_sub,
              static_cast<const char*>(key), 0);
}

// Where a Perl sub is defined: %DB::sub{NAME} = "FILE:FIRST-LAST" ($^P 0x10), else its first
// statement.
void Definition(pTHX_ CV* cv, const std::string& name, std::string* file, uint64_t* line) {
  file->clear();
  *line = 0;
  if (HV* db_sub = get_hv("DB::sub", 0)) {
    SV** range = hv_fetch(db_sub, name.c_str(), I32(name.size()), 0);
    if (range && SvOK(*range)) {
      STRLEN len;
      const char* p = SvPV(*range, len);
      std::string text(p, len);
      size_t colon = text.rfind(':');
      if (colon != std::string::npos) {
        *file = text.substr(0, colon);
        *line = std::strtoull(text.c_str() + colon + 1, nullptr, 10);
        return;
      }
    }
  }
  OP* start = CvSTART(cv);
  for (int steps = 0; start && steps < 64; start = start->op_next, ++steps) {
    if (start->op_type == OP_NEXTSTATE || start->op_type == OP_DBSTATE) {
      *file = CopFILE(cCOPx(start)) ? CopFILE(cCOPx(start)) : "";
      break;
    }
  }
  *line = FirstLine(cv);
}

// An orphaned sub's key seen again: another clone of it, or a new sub in its freed memory.
bool SameSub(pTHX_ CV* cv, const Sub& sub) {
  std::string name = SubName(aTHX_ cv), file;
  uint64_t line;
  Definition(aTHX_ cv, name, &file, &line);
  return sub.name.starts_with(name) && file == sub.def_file && line == sub.def_line;
}

}  // namespace

uint32_t SubIndex(pTHX_ CV* cv) {
  // Closures share their prototype's op tree: one sub, however many clones.
  const void* key = CvISXSUB(cv) ? static_cast<const void*>(cv) : CvSTART(cv);
  if (!key) key = cv;
  if (uint32_t* found = g->sub_by_key.find(key)) {
    Sub& known = g->subs[*found];
    if (!known.orphaned) return *found;
    if (SameSub(aTHX_ cv, known)) {
      known.orphaned = false;
      known.owner = cv;
      WatchFree(aTHX_ cv, key);
      return *found;
    }
    g->sub_by_key.retire(key);
  }
  Sub sub;
  sub.name = SubName(aTHX_ cv);
  if (!CvISXSUB(cv)) {
    Definition(aTHX_ cv, sub.name, &sub.def_file, &sub.def_line);
    size_t bare = sub.name.rfind("::");
    bare = bare == std::string::npos ? 0 : bare + 2;
    if (sub.name.compare(bare, std::string::npos, "__ANON__") == 0) {
      sub.name += "[" + sub.def_file + ":" + std::to_string(sub.def_line) + "]";
    } else if (sub.name.compare(bare, std::string::npos, "BEGIN") == 0) {
      sub.name += "@" + std::to_string(sub.def_line);
      // Several on one line (`use strict; use warnings;`): BEGIN@1, then BEGIN@1.N with N
      // counting such repeats over the whole run, as NYTProf numbers them.
      if (!g->begin_blocks.insert(sub.name).second)
        sub.name += "." + std::to_string(++g->begin_repeats);
    }
  }
  sub.underscore_exit = sub.name == "POSIX::_exit";
  sub.profiler = sub.name.rfind("Devel::Hotline::", 0) == 0;
  uint32_t index = uint32_t(g->subs.size());
  // The definition's frame: the sub at its first line.
  Frame def;
  def.sub = index;
  def.file = sub.def_file.empty() ? UINT32_MAX : FileIndex(sub.def_file.c_str());
  def.line = sub.def_line;
  g->frames.push_back(def);
  sub.def_frame = uint32_t(g->frames.size());
  sub.owner = cv;
  g->subs.push_back(std::move(sub));
  g->sub_by_key.insert(key, index);
  WatchFree(aTHX_ cv, key);
  return index;
}

uint32_t UndefinedSubIndex(const std::string& name) {
  auto it = g->undefined_subs.find(name);
  if (it != g->undefined_subs.end()) return it->second;
  Sub sub;
  sub.name = name;
  uint32_t index = uint32_t(g->subs.size());
  g->frames.push_back(Frame{index, UINT32_MAX, 0, false});
  sub.def_frame = uint32_t(g->frames.size());
  g->subs.push_back(std::move(sub));
  g->undefined_subs.emplace(name, index);
  return index;
}

uint32_t SlowOpSub(pTHX_ unsigned op_type) {
  HV* stash = CopSTASH(PL_curcop);
  if (uint32_t* found = g->slow_op_subs.find(uint64_t(uintptr_t(stash)), op_type)) return *found;
  Sub sub;
  sub.name = PackageName(stash) + "::CORE:" + PL_op_name[op_type];
  sub.slow_op = true;
  uint32_t index = uint32_t(g->subs.size());
  g->frames.push_back(Frame{index, UINT32_MAX, 0, false});
  sub.def_frame = uint32_t(g->frames.size());
  g->subs.push_back(std::move(sub));
  g->slow_op_subs.insert(uint64_t(uintptr_t(stash)), op_type, index);
  return index;
}

uint32_t FrameIndex(uint32_t sub, uint32_t file, uint64_t line) {
  uint64_t sub_file = uint64_t(sub) << 32 | file;
  if (uint32_t* found = g->frame_by_key.find(sub_file, line)) return *found;
  g->frames.push_back(Frame{sub, file, line, false});
  uint32_t index = uint32_t(g->frames.size());
  g->frame_by_key.insert(sub_file, line, index);
  return index;
}

uint32_t NodeIndex(uint32_t parent, uint32_t frame) {
  uint64_t h = (uint64_t(parent) << 32 | frame) * 0x9E3779B97F4A7C15ull;
  Profiler::RecentNode& recent = g->recent_nodes[h >> (64 - Profiler::kRecentNodeBits)];
  if (recent.parent == parent && recent.frame == frame) return recent.node;
  uint32_t index;
  if (uint32_t* found = g->node_by_key.find(parent, frame)) {
    index = *found;
  } else {
    g->nodes.push_back(Node{parent, frame, 0, 0});
    index = uint32_t(g->nodes.size());
    g->node_by_key.insert(parent, frame, index);
  }
  recent = Profiler::RecentNode{parent, frame, index};
  return index;
}

uint32_t NativeNodeIndex(uint32_t parent, uint64_t address) {
  // Frame indexes are small and user-space addresses lack bit 63: the keys cannot collide.
  uint64_t key = address | (uint64_t{1} << 63);
  if (uint32_t* found = g->node_by_key.find(parent, key)) return *found;
  g->nodes.push_back(Node{parent, 0, address, 0});
  uint32_t index = uint32_t(g->nodes.size());
  g->node_by_key.insert(parent, key, index);
  g->native_unwritten = true;
  return index;
}

}  // namespace hotline::perl

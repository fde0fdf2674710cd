// The Profile's tables of files, lines, modules and functions: each key (a path, a file and line,
// a path and build-id, a name and definition site) gets one entry and keeps its id.
#include <string>

#include "model/profile_builder.h"

namespace hotline::model {

FileId ProfileBuilder::file(const std::string& path, PseudoKind pseudo) {
  auto [it, inserted] = file_index_.try_emplace(path, FileId(profile_.files.size()));
  if (inserted) profile_.files.push_back(File{path, pseudo, 0, 0, 0});
  return it->second;
}

LineId ProfileBuilder::line(FileId file, uint32_t line) {
  uint64_t key = (uint64_t{file.index()} << 32) | line;
  auto [it, inserted] = line_index_.try_emplace(key, LineId(profile_.lines.size()));
  if (inserted) profile_.lines.push_back(Line{file, line, 0, 0, 0});
  return it->second;
}

ModuleId ProfileBuilder::module(const format::RawModule& raw) {
  // One module per (path, build-id): reloading a library does not make it a second module.
  std::string key = raw.path;
  key.push_back('\0');
  key += raw.build_id;
  auto [it, inserted] = module_index_.try_emplace(key, ModuleId(profile_.modules.size()));
  if (inserted) {
    Module m;
    m.path = raw.path;
    m.name = baseName(raw.path);
    m.build_id = raw.build_id;
    m.bias = raw.bias;
    m.start = raw.start;
    m.size = raw.size;
    m.file_offset = raw.file_offset;
    profile_.modules.push_back(std::move(m));
  }
  return it->second;
}

ModuleId ProfileBuilder::pseudoModule(PseudoKind kind, const std::string& name) {
  std::string key = "\1" + name;  // cannot collide with a path + '\0' + build-id
  auto [it, inserted] = module_index_.try_emplace(key, ModuleId(profile_.modules.size()));
  if (inserted) {
    Module m;
    m.path = name;
    m.name = name;
    m.pseudo = kind;
    profile_.modules.push_back(std::move(m));
  }
  return it->second;
}

FunctionId ProfileBuilder::function(const std::string& name, const std::string& decl_file,
                                    uint32_t decl_line, ModuleId module) {
  std::string key = name;
  key.push_back('\0');
  key += decl_file;
  key.push_back('\0');
  key += std::to_string(decl_line);
  // Without a definition site, the module is what keeps two static functions of one name in
  // two libraries apart.
  if (decl_file.empty()) {
    key.push_back('\0');
    key += std::to_string(module.index());
  }
  auto [it, inserted] = function_index_.try_emplace(key, FunctionId(profile_.functions.size()));
  if (inserted) {
    Function f;
    f.name = name;
    if (!decl_file.empty()) f.file = file(decl_file, PseudoKind::kNone);
    f.line = decl_line;
    f.module = module;
    profile_.functions.push_back(std::move(f));
  }
  return it->second;
}

FunctionId ProfileBuilder::pseudoFunction(PseudoKind kind, const std::string& name,
                                          ModuleId module) {
  std::string key = "\1" + name;
  key.push_back('\0');
  key += std::to_string(module.index());
  auto [it, inserted] = function_index_.try_emplace(key, FunctionId(profile_.functions.size()));
  if (inserted) {
    Function f;
    f.name = name;
    f.file = file(name, kind);
    f.module = module;
    f.pseudo = kind;
    profile_.functions.push_back(std::move(f));
  }
  return it->second;
}

}  // namespace hotline::model

#include "symbolize/symbol_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <vector>

#include "base/varint.h"

namespace hotline::symbolize {
namespace {

constexpr char kMagic[] = "hotline symbols 1\n";

std::string CacheDirectory() {
  if (const char* dir = std::getenv("HOTLINE_CACHE_DIR"); dir && *dir)
    return std::string(dir) == "off" ? "" : std::string(dir) + "/symbols";
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/hotline/symbols";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/hotline/symbols";
  return {};
}

// FNV-1a over the bytes that name a module's contents.
uint64_t Hash(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

class Writer {
 public:
  void number(uint64_t v) {
    uint8_t bytes[kMaxVarintBytes];
    out_.append(reinterpret_cast<const char*>(bytes), EncodeVarint(v, bytes));
  }
  void text(const std::string& s) {  // an index into the string table, written once each
    auto [it, added] = strings_.try_emplace(s, strings_.size());
    number(it->second);
    if (added) order_.push_back(&it->first);
  }
  std::string finish() {
    std::string head = kMagic;
    Writer table;
    table.number(order_.size());
    for (const std::string* s : order_) {
      table.number(s->size());
      table.out_ += *s;
    }
    return head + table.out_ + out_;
  }

 private:
  std::string out_;
  std::map<std::string, uint64_t> strings_;
  std::vector<const std::string*> order_;
};

void Put(Writer& w, const AddressCache& cache) {
  w.number(cache.size());
  for (const auto& [vaddr, resolved] : cache) {
    w.number(vaddr);
    w.number(resolved.frames.size());
    for (const ResolvedFrame& f : resolved.frames) {
      w.text(f.function);
      w.text(f.file);
      w.number(f.line);
      w.text(f.decl_file);
      w.number(f.decl_line);
      w.number(uint64_t(f.source));
    }
  }
}

bool Get(ByteCursor& in, const std::vector<std::string>& strings, const std::string& module,
         AddressCache& cache) {
  uint64_t count = 0;
  if (!in.varint(&count) || count > in.remaining()) return false;
  auto text = [&](std::string* out) {
    uint64_t index = 0;
    if (!in.varint(&index) || index >= strings.size()) return false;
    *out = strings[index];
    return true;
  };
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t vaddr = 0, frames = 0;
    if (!in.varint(&vaddr) || !in.varint(&frames) || frames > in.remaining()) return false;
    ResolvedAddress& resolved = cache[vaddr];
    resolved.module = module;
    resolved.module_address = vaddr;
    resolved.frames.resize(frames);
    for (ResolvedFrame& f : resolved.frames) {
      uint64_t line = 0, decl_line = 0, source = 0;
      if (!text(&f.function) || !text(&f.file) || !in.varint(&line) || !text(&f.decl_file) ||
          !in.varint(&decl_line) || !in.varint(&source) || line > UINT32_MAX ||
          decl_line > UINT32_MAX || source > uint64_t(FrameSource::kInline))
        return false;
      f.line = uint32_t(line);
      f.decl_line = uint32_t(decl_line);
      f.source = FrameSource(source);
    }
  }
  return true;
}

}  // namespace

std::string SymbolCachePath(const ModuleInfo& module, const std::vector<std::string>& debug_dirs) {
  std::string dir = CacheDirectory();
  struct stat st {};
  if (dir.empty() || module.path.empty() || module.path[0] != '/' ||
      stat(module.path.c_str(), &st) != 0)
    return {};
  std::string identity = module.path + '\0' + std::to_string(st.st_size) + '\0' +
                         std::to_string(st.st_mtim.tv_sec) + '.' +
                         std::to_string(st.st_mtim.tv_nsec) + '\0' + module.build_id;
  for (const std::string& d : debug_dirs) identity += '\0' + d;
  char name[32];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(Hash(identity)));
  return dir + "/" + name;
}

bool LoadSymbolCache(const std::string& path, const std::string& module, AddressCache& addresses,
                     AddressCache& returns) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return false;
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  size_t magic = sizeof kMagic - 1;
  if (bytes.compare(0, magic, kMagic) != 0) return false;
  ByteCursor in(reinterpret_cast<const uint8_t*>(bytes.data()) + magic, bytes.size() - magic);
  uint64_t count = 0;
  if (!in.varint(&count) || count > in.remaining()) return false;
  std::vector<std::string> strings(count);
  for (std::string& s : strings) {
    uint64_t size = 0;
    const uint8_t* at = nullptr;
    if (!in.varint(&size) || size > in.remaining() || !in.bytes(size, &at)) return false;
    s.assign(reinterpret_cast<const char*>(at), size);
  }
  if (!Get(in, strings, module, addresses) || !Get(in, strings, module, returns) || !in.atEnd()) {
    addresses.clear();
    returns.clear();
    return false;
  }
  return true;
}

void SaveSymbolCache(const std::string& path, const AddressCache& addresses,
                     const AddressCache& returns) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  Writer w;
  Put(w, addresses);
  Put(w, returns);
  std::string bytes = w.finish();
  std::string temporary = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out || !out.write(bytes.data(), std::streamsize(bytes.size()))) {
      std::remove(temporary.c_str());
      return;  // a cache that cannot be written is only a slower next time
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) std::remove(temporary.c_str());
}

}  // namespace hotline::symbolize

// WriteFileAtomically: a temporary file in OUT's directory (so the rename cannot cross file
// systems), written whole, flushed, then renamed over OUT; removed on any failure.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include "export/export.h"

namespace hotline::exporter {
namespace {

Status Failure(const std::string& path, int error) {
  return Status::Error(path + ": " + std::strerror(error));
}

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  return WriteFileAtomically(path, [bytes](const std::function<void(std::string_view)>& out) {
    out(bytes);
    return Status();
  });
}

Status WriteFileAtomically(
    const std::string& path,
    const std::function<Status(const std::function<void(std::string_view)>& out)>& write) {
  std::string temporary = path + ".XXXXXX";
  int fd = mkstemp(temporary.data());
  if (fd < 0) return Failure(path, errno);
  // mkstemp creates 0600; an export is an ordinary file, readable as the umask allows.
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  // Pieces are gathered into blocks of about a megabyte: few system calls, little memory.
  constexpr size_t kBlock = 1u << 20;
  std::string block;
  bool written = true;
  int error = 0;
  auto flush = [&] {
    if (written && !WriteAll(fd, block)) {
      written = false;
      error = errno;
    }
    block.clear();
  };
  Status made = write([&](std::string_view bytes) {
    block += bytes;
    if (block.size() >= kBlock) flush();
  });
  flush();
  if (close(fd) != 0 && written) {
    written = false;
    error = errno;
  }
  if (made.ok() && written && rename(temporary.c_str(), path.c_str()) == 0) return {};
  if (made.ok() && written) error = errno;
  unlink(temporary.c_str());
  if (!made.ok()) return made;
  return Failure(path, error);
}

}  // namespace hotline::exporter

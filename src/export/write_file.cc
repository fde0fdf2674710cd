// WriteFileAtomically: a temporary file in OUT's directory (so the rename cannot cross file
// systems), written whole, flushed, then renamed over OUT; removed on any failure.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
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
  std::string temporary = path + ".XXXXXX";
  int fd = mkstemp(temporary.data());
  if (fd < 0) return Failure(path, errno);
  // mkstemp creates 0600; an export is an ordinary file, readable as the umask allows.
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  bool written = WriteAll(fd, bytes);
  int error = errno;
  if (close(fd) != 0 && written) {
    written = false;
    error = errno;
  }
  if (written && rename(temporary.c_str(), path.c_str()) == 0) return {};
  if (written) error = errno;
  unlink(temporary.c_str());
  return Failure(path, error);
}

}  // namespace hotline::exporter

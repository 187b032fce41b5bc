#include "runtime/base/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ft {

namespace fs = std::filesystem;

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return FT_ERROR(ErrorCode::kIo, "cannot open {}: {}", path, std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return FT_ERROR(ErrorCode::kIo, "cannot read {}", path);
  return ss.str();
}

Status write_file_atomic(const std::string& path, const void* data, size_t size) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return FT_ERROR(ErrorCode::kIo, "cannot create {}: {}", tmp, std::strerror(errno));
  const char* p = static_cast<const char*>(data);
  size_t left = size;
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return FT_ERROR(ErrorCode::kIo, "cannot write {}: {}", tmp, std::strerror(err));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return FT_ERROR(ErrorCode::kIo, "cannot write {}: {}", path, std::strerror(err));
  }
  return Status();
}

Status make_dirs(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) return FT_ERROR(ErrorCode::kIo, "cannot create directory {}: {}", path, ec.message());
  return Status();
}

std::string default_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/freetoken";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/freetoken";
  return "/tmp/freetoken-cache";
}

Result<std::string> make_temp_dir(const std::string& prefix) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/" + prefix + "XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    return FT_ERROR(ErrorCode::kIo, "cannot create a temporary directory {}: {}", tmpl, std::strerror(errno));
  return std::string(buf.data());
}

Status remove_tree(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) return FT_ERROR(ErrorCode::kIo, "cannot remove {}: {}", path, ec.message());
  return Status();
}

std::string executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return ".";
  return exe.parent_path().string();
}

}  // namespace ft

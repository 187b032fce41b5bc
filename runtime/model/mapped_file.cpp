#include "runtime/model/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ft {

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return FT_ERROR(err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo, "cannot open {}: {}", path,
                    std::strerror(err));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return FT_ERROR(ErrorCode::kIo, "cannot stat {}: {}", path, std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return FT_ERROR(ErrorCode::kInvalidArgument, "{} is not a regular file", path);
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return std::shared_ptr<const MappedFile>(new MappedFile(nullptr, 0, false, path));
  }
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);  // the mapping keeps the file alive
  if (p == MAP_FAILED) return FT_ERROR(ErrorCode::kIo, "cannot mmap {}: {}", path, std::strerror(err));
  return std::shared_ptr<const MappedFile>(new MappedFile(static_cast<const uint8_t*>(p), size, true, path));
}

std::shared_ptr<const MappedFile> MappedFile::borrow(std::span<const uint8_t> bytes, std::string name) {
  return std::shared_ptr<const MappedFile>(new MappedFile(bytes.data(), bytes.size(), false, std::move(name)));
}

MappedFile::~MappedFile() {
  if (owned_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace ft

// A read-only view of a whole file through mmap (PROT_READ, MAP_PRIVATE), so
// opening a multi-GB model costs page-table setup only: pages are read when a
// tensor is first touched. Movable, not copyable; unmaps on destruction.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "runtime/base/status.h"

namespace ft {

class MappedFile {
 public:
  // kNotFound when the path does not exist, kIo for other failures. An empty
  // file maps to an empty span.
  static Result<std::shared_ptr<const MappedFile>> open(const std::string& path);
  // Borrows `bytes` (the caller keeps them alive); for parsing from memory.
  static std::shared_ptr<const MappedFile> borrow(std::span<const uint8_t> bytes, std::string name);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(const uint8_t* data, size_t size, bool owned, std::string path)
      : data_(data), size_(size), owned_(owned), path_(std::move(path)) {}

  const uint8_t* data_;
  size_t size_;
  bool owned_;
  std::string path_;
};

}  // namespace ft

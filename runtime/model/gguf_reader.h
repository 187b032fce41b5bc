// GGUF (v2 and v3) reader over a read-only mmap.
//
// open() parses the header, the metadata and the tensor table and validates
// every count, length, offset and size against the bytes actually present, so
// that no later call can read out of bounds. Tensor data is not touched: open
// costs O(metadata) whatever the file size. Any inconsistency is kCorrupt with
// a message naming the field; a valid file using a tensor type ft cannot
// decode still opens, and only tensor_data() on that tensor is refused
// (kUnsupported).
//
// A GgufReader is immutable after open() and safe to share between threads.
// Spans it returns stay valid while the reader (or a copy of it) lives.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/base/status.h"
#include "runtime/model/ggml_types.h"
#include "runtime/model/gguf_value.h"
#include "runtime/model/mapped_file.h"

namespace ft {

inline constexpr uint32_t kGgufDefaultAlignment = 32;

struct GgufTensorInfo {
  std::string name;
  GgmlType type;
  std::vector<uint64_t> shape;  // ggml order: shape[0] is the contiguous (row) dimension
  uint64_t offset = 0;          // from the start of the data section
  uint64_t n_elements = 0;
  uint64_t n_bytes = 0;
};

class GgufReader {
 public:
  static Result<GgufReader> open(const std::string& path);
  // Parses bytes the caller keeps alive for the reader's lifetime.
  static Result<GgufReader> from_memory(std::span<const uint8_t> bytes);

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  uint64_t file_size() const { return file_->bytes().size(); }
  const std::string& path() const { return file_->path(); }

  // Metadata in file order.
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return metadata_; }
  const GgufValue* find(std::string_view key) const;

  // Typed getters: kNotFound naming the key when absent, kCorrupt when the
  // stored type does not fit the request.
  Result<std::string> get_string(std::string_view key) const;
  Result<int64_t> get_int(std::string_view key) const;    // any integer type
  Result<uint64_t> get_uint(std::string_view key) const;  // any non-negative integer
  Result<double> get_float(std::string_view key) const;   // f32 or f64
  Result<bool> get_bool(std::string_view key) const;
  Result<const GgufArray*> get_array(std::string_view key) const;
  Result<std::vector<std::string>> get_strings(std::string_view key) const;

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(std::string_view name) const;
  // The tensor's bytes inside the mapping; kNotFound / kUnsupported.
  Result<std::span<const uint8_t>> tensor_data(std::string_view name) const;
  Result<std::span<const uint8_t>> tensor_data(const GgufTensorInfo& info) const;

 private:
  friend class GgufParser;
  std::shared_ptr<const MappedFile> file_;
  uint32_t version_ = 0;
  uint64_t alignment_ = kGgufDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::map<std::string, size_t, std::less<>> metadata_index_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
};

}  // namespace ft

// safetensors reader over mmap, for single files and sharded folders.
//
// File layout: u64 little-endian header length N, N bytes of JSON
// {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}},
// then the data buffer the offsets index into. open() validates every entry
// (known dtype, sizes that match the shape, offsets inside the buffer) so that
// data() can never read out of bounds. Tensors of dtypes other than F32, F16
// and BF16 are listed, and refused (kUnsupported) when their data is asked for.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/status.h"
#include "runtime/model/ggml_types.h"
#include "runtime/model/mapped_file.h"

namespace ft {

struct SafetensorsTensor {
  std::string name;
  std::string dtype;               // as written: "BF16", "F32", "I64", ...
  std::optional<GgmlType> type;    // F32/F16/BF16, else nullopt (unsupported)
  std::vector<uint64_t> shape;     // safetensors order: outermost first
  uint64_t begin = 0;              // offsets into the data buffer
  uint64_t end = 0;
};

class SafetensorsFile {
 public:
  static Result<SafetensorsFile> open(const std::string& path);
  static Result<SafetensorsFile> from_memory(std::span<const uint8_t> bytes);

  const std::string& path() const { return file_->path(); }
  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const SafetensorsTensor* find(std::string_view name) const;
  Result<std::span<const uint8_t>> data(std::string_view name) const;

 private:
  static Result<SafetensorsFile> parse(std::shared_ptr<const MappedFile> file);

  std::shared_ptr<const MappedFile> file_;
  uint64_t data_start_ = 0;
  std::vector<SafetensorsTensor> tensors_;
  std::map<std::string, size_t, std::less<>> index_;
  std::map<std::string, std::string> metadata_;
};

// All tensors of a model folder: `model.safetensors`, or the shards named by
// `model.safetensors.index.json` (every shard is opened and every tensor of
// the weight map must be in its shard), or else every *.safetensors file.
class SafetensorsModel {
 public:
  static Result<SafetensorsModel> open_dir(const std::string& dir);

  const std::vector<SafetensorsFile>& files() const { return files_; }
  // Tensor names in a stable (sorted) order.
  std::vector<std::string> names() const;
  const SafetensorsTensor* find(std::string_view name) const;
  Result<std::span<const uint8_t>> data(std::string_view name) const;

 private:
  std::vector<SafetensorsFile> files_;
  std::map<std::string, size_t, std::less<>> owner_;  // tensor name -> file index
};

}  // namespace ft

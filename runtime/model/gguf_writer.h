// GGUF v3 writer that streams tensor data to disk.
//
// Metadata and tensor descriptions are collected first (sizes follow from
// type and shape); write() then emits the header and calls each tensor's
// producer in order, so only one tensor's data (or less) is in memory at a
// time. The file appears atomically: everything goes to a temporary file
// beside the target, which is renamed over it only after a successful fsync.
// Any failure (disk full, unwritable directory, a producer error, a producer
// writing the wrong byte count) removes the temporary and leaves no file.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "runtime/base/status.h"
#include "runtime/model/ggml_types.h"
#include "runtime/model/gguf_value.h"

namespace ft {

// Receives a tensor's bytes, in pieces of any size.
using GgufSink = std::function<Status(std::span<const uint8_t>)>;
// Produces one tensor's bytes into the sink; must write exactly its size.
using GgufProducer = std::function<Status(const GgufSink&)>;
// Called after each tensor: (tensors done, tensor count, bytes done, total bytes).
using GgufProgress = std::function<void(size_t, size_t, uint64_t, uint64_t)>;

class GgufWriter {
 public:
  explicit GgufWriter(uint32_t alignment = 32);

  // Sets (or replaces) a metadata key. general.alignment is managed by the writer.
  void set(const std::string& key, GgufValue value);
  // Adds a tensor; `shape` is in ggml order (shape[0] contiguous).
  // kInvalidArgument for a duplicate name, 0 or >4 dims, a zero dim, or a row
  // length that is not a whole number of blocks.
  Status add_tensor(const std::string& name, GgmlType type, std::vector<uint64_t> shape, GgufProducer producer);
  // Convenience for data already in memory (tests, small tensors).
  Status add_tensor_bytes(const std::string& name, GgmlType type, std::vector<uint64_t> shape,
                          std::vector<uint8_t> bytes);

  Status write(const std::string& path, const GgufProgress& progress = {}) const;

 private:
  struct Tensor {
    std::string name;
    GgmlType type;
    std::vector<uint64_t> shape;
    uint64_t n_bytes;
    GgufProducer producer;
  };
  uint32_t alignment_;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<Tensor> tensors_;
};

}  // namespace ft

// libFuzzer target: GgufReader on arbitrary bytes, then everything a caller
// may do with a reader that opened (metadata, tensor spans, dequantizing the
// first row, the model config). ASan turns any out-of-bounds read into a crash.
#include <cstdint>
#include <vector>

#include "runtime/model/gguf_reader.h"
#include "runtime/model/model_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto reader = ft::GgufReader::from_memory({data, size});
  if (!reader.ok()) return 0;
  for (const auto& [key, value] : reader->metadata()) (void)value.to_string(4);
  for (const auto& t : reader->tensors()) {
    auto bytes = reader->tensor_data(t);
    if (!bytes.ok()) continue;
    const uint64_t row = t.shape[0];
    if (row > (1u << 16)) continue;
    const auto row_bytes = ft::ggml_bytes(t.type, row);
    if (!row_bytes || *row_bytes > bytes->size()) __builtin_trap();  // the reader promised whole rows
    std::vector<float> out(row);
    (void)ft::dequantize_row(t.type, bytes->first(*row_bytes), out.data(), row);
  }
  (void)ft::config_from_gguf(*reader);
  return 0;
}

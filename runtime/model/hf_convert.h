// HF safetensors folder -> GGUF file (what `ft-model convert` runs).
//
// Reads config.json, the safetensors (single or sharded), tokenizer.json,
// tokenizer_config.json and chat_template.jinja when present; validates the
// weights against the config (WeightSet); writes the config as <arch>.* keys,
// the tokenizer as tokenizer.ggml.* keys, and every tensor under the GGUF
// name, encoded per the recipe while the file is streamed out. Llama q/k
// projections are permuted from HF's rotate_half layout to the adjacent-pair
// (NORM) layout GGUF llama files use; see model_config.h.
#pragma once

#include <functional>
#include <string>

#include "runtime/base/status.h"
#include "runtime/model/ggml_types.h"
#include "runtime/model/model_writer.h"

namespace ft {

struct ConvertCallbacks {
  // A remark worth showing the user (a type fallback, a skipped tensor).
  std::function<void(const std::string&)> note;
  // Before each tensor is encoded: (index, count, name, type).
  std::function<void(size_t, size_t, const std::string&, GgmlType)> on_tensor;
};

struct ConvertOptions {
  std::string input_dir;
  std::string output_path;
  ModelFileType type = ModelFileType::kF16;
  ConvertCallbacks callbacks;
};

Status convert_hf_to_gguf(const ConvertOptions& options);

// Wraps `rows` so that on_tensor reports the tensor when its encoding starts.
RowSource with_progress(RowSource rows, const ConvertCallbacks& callbacks, size_t index, size_t count,
                        const std::string& name, GgmlType type);

// Row `row` of a llama q/k projection in GGUF (NORM) order comes from this
// row of the HF (NEOX) matrix; heads of `head_dim` rows each.
uint64_t llama_rope_source_row(uint64_t row, uint32_t head_dim);

}  // namespace ft

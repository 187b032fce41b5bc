// Tensor naming: ft uses the GGUF names internally ("token_embd.weight",
// "blk.3.attn_q.weight", ...). HF checkpoint names map onto them here, and
// the tensors a config needs, with their shapes, are listed here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/model/model_config.h"

namespace ft {

// "model.layers.3.self_attn.q_proj.weight" -> "blk.3.attn_q.weight".
// nullopt for names ft has no use for (e.g. rotary_emb.inv_freq).
std::optional<std::string> hf_to_internal_name(std::string_view hf_name);

struct ExpectedTensor {
  std::string name;
  std::vector<uint64_t> shape;  // ggml order: shape[0] is the row (input) dimension
  bool required = true;
};

// Every tensor the architecture uses for `config`. output.weight is listed as
// optional: without it the embeddings are tied.
std::vector<ExpectedTensor> expected_tensors(const ModelConfig& config);

std::string shape_string(const std::vector<uint64_t>& shape);

}  // namespace ft

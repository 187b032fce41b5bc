// A small random-weight model with a real tokenizer, for tests and demos
// (what `ft-model synth` runs). Weights are deterministic in the seed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "runtime/base/status.h"
#include "runtime/model/hf_convert.h"
#include "runtime/model/model_config.h"
#include "runtime/model/model_writer.h"

namespace ft {

struct SynthOptions {
  ModelArch arch = ModelArch::kQwen3;
  uint32_t layers = 2;
  uint32_t hidden = 256;
  uint32_t intermediate = 512;
  uint32_t heads = 4;
  uint32_t kv_heads = 2;
  uint32_t head_dim = 64;
  uint32_t context_length = 4096;
  bool tied_embeddings = false;
  std::string tokenizer_json_path;
  // When set: its chat template and special tokens go into the GGUF, and
  // tokenizer.json and tokenizer_config.json are copied beside the output.
  std::optional<std::string> tokenizer_config_path;
  ModelFileType type = ModelFileType::kF16;
  uint64_t seed = 0;
  std::string output_path;
  ConvertCallbacks callbacks;
};

// The config synth writes for `options` (vocab size from the tokenizer).
Result<ModelConfig> synth_config(const SynthOptions& options, uint32_t vocab_size);
Status synth_model(const SynthOptions& options);

}  // namespace ft

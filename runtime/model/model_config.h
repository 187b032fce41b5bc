// One description of a decoder-only transformer, read from a GGUF file or an
// HF config.json, whichever the model came in.
//
// RoPE layout. HF checkpoints rotate pairs (x[i], x[i + d/2]) ("rotate_half",
// NEOX style) for every architecture here. llama.cpp's converter permutes the
// q/k projection rows of *llama* models so that GGUF llama files rotate
// adjacent pairs (x[2i], x[2i+1]) (NORM style); qwen2/qwen3 GGUF files keep
// the NEOX layout. ft's own converter does the same permutation, so rope_style
// always describes the weights as they are loaded: NORM for llama from GGUF,
// NEOX for everything else.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/base/status.h"

namespace ft {

class GgufReader;

enum class ModelArch { kLlama, kQwen2, kQwen3 };
enum class RopeStyle { kNorm, kNeox };
enum class RopeScalingType { kNone, kLinear, kYarn, kLlama3 };

const char* model_arch_name(ModelArch arch);  // "llama", "qwen2", "qwen3" (the GGUF names)
const char* rope_style_name(RopeStyle style);
const char* rope_scaling_name(RopeScalingType type);

struct RopeScaling {
  RopeScalingType type = RopeScalingType::kNone;
  float factor = 1.0f;
  uint32_t original_max_positions = 0;  // yarn, llama3
  float low_freq_factor = 1.0f;         // llama3
  float high_freq_factor = 4.0f;        // llama3
  float beta_fast = 32.0f;              // yarn
  float beta_slow = 1.0f;               // yarn
  // Per rotary frequency divisors (head_dim/2 values): computed from the
  // llama3 parameters, or read from a GGUF rope_freqs tensor. Empty otherwise.
  std::vector<float> freq_factors;
};

struct ModelConfig {
  ModelArch arch = ModelArch::kLlama;
  uint32_t vocab_size = 0;
  uint32_t hidden_size = 0;
  uint32_t intermediate_size = 0;
  uint32_t num_layers = 0;
  uint32_t num_heads = 0;
  uint32_t num_kv_heads = 0;
  uint32_t head_dim = 0;
  float rms_norm_eps = 1e-6f;
  float rope_theta = 10000.0f;
  RopeScaling rope_scaling;
  uint32_t max_positions = 0;
  bool tied_embeddings = false;
  bool qkv_bias = false;  // qwen2: q/k/v projections carry biases
  bool qk_norm = false;   // qwen3: RMSNorm on q and k per head
  RopeStyle rope_style = RopeStyle::kNeox;
  std::optional<int32_t> bos_id;
  std::optional<int32_t> eos_id;

  // Shape rules every consumer relies on (non-zero sizes, heads divide, ...).
  Status validate() const;
};

// From `<arch>.*` GGUF keys; vocab size from the token list (or
// `<arch>.vocab_size`), bos/eos from tokenizer.ggml.*, tied embeddings when
// there is no output.weight tensor, llama3-style factors from rope_freqs.weight.
Result<ModelConfig> config_from_gguf(const GgufReader& gguf);
// From the text of an HF config.json (LlamaForCausalLM, Qwen2ForCausalLM,
// Qwen3ForCausalLM; Qwen3MoeForCausalLM and others give kUnsupported).
Result<ModelConfig> config_from_hf_json(const std::string& text);

// Llama-3 rope scaling: the divisor of each of the head_dim/2 frequencies.
std::vector<float> llama3_freq_factors(const RopeScaling& s, float theta, uint32_t head_dim);

}  // namespace ft

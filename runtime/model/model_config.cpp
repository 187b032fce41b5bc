#include "runtime/model/model_config.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>

#include <nlohmann/json.hpp>

#include "runtime/model/gguf_reader.h"

namespace ft {

namespace {

using json = nlohmann::json;

Result<ModelArch> arch_from_gguf_name(const std::string& name) {
  if (name == "llama") return ModelArch::kLlama;
  if (name == "qwen2") return ModelArch::kQwen2;
  if (name == "qwen3") return ModelArch::kQwen3;
  if (name == "qwen3moe") return FT_ERROR(ErrorCode::kUnsupported, "architecture qwen3moe (Qwen3-MoE) is not yet supported");
  return FT_ERROR(ErrorCode::kUnsupported, "architecture {} is not supported (llama, qwen2, qwen3 are)", name);
}

Result<uint32_t> narrow_u32(Result<uint64_t> v, std::string_view key) {
  if (!v.ok()) return v.status();
  if (*v > std::numeric_limits<uint32_t>::max())
    return FT_ERROR(ErrorCode::kCorrupt, "{} = {} is out of range", key, *v);
  return static_cast<uint32_t>(*v);
}

// A key that may be absent: the default when missing, an error when present
// with a bad type.
template <typename T, typename Get>
Result<T> optional_key(const GgufReader& g, const std::string& key, T fallback, Get get) {
  if (!g.find(key)) return fallback;
  return get(key);
}

Result<std::optional<int32_t>> optional_token_id(const GgufReader& g, const std::string& key) {
  if (!g.find(key)) return std::optional<int32_t>();
  FT_ASSIGN_OR_RETURN(uint32_t v, narrow_u32(g.get_uint(key), key));
  if (v > static_cast<uint32_t>(std::numeric_limits<int32_t>::max()))
    return FT_ERROR(ErrorCode::kCorrupt, "{} = {} is out of range", key, v);
  return std::optional<int32_t>(static_cast<int32_t>(v));
}

Status read_gguf_rope_scaling(const GgufReader& g, const std::string& p, ModelConfig* c) {
  auto as_float = [&](const std::string& k) -> Result<float> {
    FT_ASSIGN_OR_RETURN(double v, g.get_float(k));
    return static_cast<float>(v);
  };
  auto as_u32 = [&](const std::string& k) { return narrow_u32(g.get_uint(k), k); };
  FT_ASSIGN_OR_RETURN(std::string type, optional_key<std::string>(g, p + "rope.scaling.type", "none",
                                                                  [&](const std::string& k) { return g.get_string(k); }));
  RopeScaling& s = c->rope_scaling;
  if (type == "none") {
    s.type = RopeScalingType::kNone;
  } else if (type == "linear") {
    s.type = RopeScalingType::kLinear;
  } else if (type == "yarn") {
    s.type = RopeScalingType::kYarn;
    FT_ASSIGN_OR_RETURN(s.original_max_positions, optional_key<uint32_t>(g, p + "rope.scaling.original_context_length", 0, as_u32));
    FT_ASSIGN_OR_RETURN(s.beta_fast, optional_key<float>(g, p + "rope.scaling.yarn_beta_fast", 32.0f, as_float));
    FT_ASSIGN_OR_RETURN(s.beta_slow, optional_key<float>(g, p + "rope.scaling.yarn_beta_slow", 1.0f, as_float));
  } else {
    return FT_ERROR(ErrorCode::kUnsupported, "rope scaling type {} is not supported", type);
  }
  if (s.type != RopeScalingType::kNone) {
    FT_ASSIGN_OR_RETURN(s.factor, optional_key<float>(g, p + "rope.scaling.factor", 1.0f, as_float));
  }
  // llama.cpp stores Llama-3 scaling as a tensor of per-frequency divisors.
  if (const GgufTensorInfo* t = g.find_tensor("rope_freqs.weight")) {
    if (t->type != GgmlType::kF32 || t->n_elements != c->head_dim / 2)
      return FT_ERROR(ErrorCode::kCorrupt, "rope_freqs.weight must be {} f32 values", c->head_dim / 2);
    FT_ASSIGN_OR_RETURN(auto bytes, g.tensor_data(*t));
    s.freq_factors.resize(t->n_elements);
    std::memcpy(s.freq_factors.data(), bytes.data(), bytes.size());
    if (s.type == RopeScalingType::kNone) s.type = RopeScalingType::kLlama3;
  }
  return Status();
}

}  // namespace

const char* model_arch_name(ModelArch arch) {
  switch (arch) {
    case ModelArch::kLlama: return "llama";
    case ModelArch::kQwen2: return "qwen2";
    case ModelArch::kQwen3: return "qwen3";
  }
  return "?";
}

const char* rope_style_name(RopeStyle style) { return style == RopeStyle::kNorm ? "norm" : "neox"; }

const char* rope_scaling_name(RopeScalingType type) {
  switch (type) {
    case RopeScalingType::kNone: return "none";
    case RopeScalingType::kLinear: return "linear";
    case RopeScalingType::kYarn: return "yarn";
    case RopeScalingType::kLlama3: return "llama3";
  }
  return "?";
}

Status ModelConfig::validate() const {
  auto positive = [](const char* what, uint32_t v) -> Status {
    if (v == 0) return FT_ERROR(ErrorCode::kCorrupt, "model config: {} is zero", what);
    return Status();
  };
  FT_RETURN_IF_ERROR(positive("vocab size", vocab_size));
  FT_RETURN_IF_ERROR(positive("hidden size", hidden_size));
  FT_RETURN_IF_ERROR(positive("intermediate size", intermediate_size));
  FT_RETURN_IF_ERROR(positive("layer count", num_layers));
  FT_RETURN_IF_ERROR(positive("head count", num_heads));
  FT_RETURN_IF_ERROR(positive("kv head count", num_kv_heads));
  FT_RETURN_IF_ERROR(positive("head dim", head_dim));
  if (num_heads % num_kv_heads != 0)
    return FT_ERROR(ErrorCode::kCorrupt, "model config: {} heads is not a multiple of {} kv heads", num_heads,
                    num_kv_heads);
  if (head_dim % 2 != 0) return FT_ERROR(ErrorCode::kCorrupt, "model config: head dim {} is odd", head_dim);
  if (!(rms_norm_eps > 0.0f) || !(rope_theta > 0.0f) || !std::isfinite(rope_theta))
    return FT_ERROR(ErrorCode::kCorrupt, "model config: rms eps {} and rope theta {} must be positive", rms_norm_eps,
                    rope_theta);
  if (!rope_scaling.freq_factors.empty() && rope_scaling.freq_factors.size() != head_dim / 2)
    return FT_ERROR(ErrorCode::kCorrupt, "model config: {} rope frequency factors for head dim {}",
                    rope_scaling.freq_factors.size(), head_dim);
  return Status();
}

Result<ModelConfig> config_from_gguf(const GgufReader& g) {
  ModelConfig c;
  FT_ASSIGN_OR_RETURN(std::string arch_name, g.get_string("general.architecture"));
  FT_ASSIGN_OR_RETURN(c.arch, arch_from_gguf_name(arch_name));
  const std::string p = arch_name + ".";
  auto u32 = [&](const std::string& k) { return narrow_u32(g.get_uint(k), k); };
  FT_ASSIGN_OR_RETURN(c.max_positions, u32(p + "context_length"));
  FT_ASSIGN_OR_RETURN(c.hidden_size, u32(p + "embedding_length"));
  FT_ASSIGN_OR_RETURN(c.num_layers, u32(p + "block_count"));
  FT_ASSIGN_OR_RETURN(c.intermediate_size, u32(p + "feed_forward_length"));
  FT_ASSIGN_OR_RETURN(c.num_heads, u32(p + "attention.head_count"));
  FT_ASSIGN_OR_RETURN(c.num_kv_heads, optional_key<uint32_t>(g, p + "attention.head_count_kv", c.num_heads, u32));
  const uint32_t default_head_dim = c.num_heads ? c.hidden_size / c.num_heads : 0;
  FT_ASSIGN_OR_RETURN(c.head_dim, optional_key<uint32_t>(g, p + "attention.key_length", default_head_dim, u32));
  FT_ASSIGN_OR_RETURN(double eps, g.get_float(p + "attention.layer_norm_rms_epsilon"));
  c.rms_norm_eps = static_cast<float>(eps);
  FT_ASSIGN_OR_RETURN(double theta, optional_key<double>(g, p + "rope.freq_base", 10000.0,
                                                         [&](const std::string& k) { return g.get_float(k); }));
  c.rope_theta = static_cast<float>(theta);
  if (const GgufValue* tokens = g.find("tokenizer.ggml.tokens"); tokens && tokens->array()) {
    c.vocab_size = static_cast<uint32_t>(std::min<size_t>(tokens->array()->size(), UINT32_MAX));
  } else if (g.find(p + "vocab_size")) {
    FT_ASSIGN_OR_RETURN(c.vocab_size, u32(p + "vocab_size"));
  } else if (const GgufTensorInfo* embd = g.find_tensor("token_embd.weight"); embd && embd->shape.size() == 2) {
    c.vocab_size = static_cast<uint32_t>(std::min<uint64_t>(embd->shape[1], UINT32_MAX));
  }
  c.tied_embeddings = g.find_tensor("output.weight") == nullptr;
  c.qkv_bias = c.arch == ModelArch::kQwen2;
  c.qk_norm = c.arch == ModelArch::kQwen3;
  c.rope_style = c.arch == ModelArch::kLlama ? RopeStyle::kNorm : RopeStyle::kNeox;
  FT_RETURN_IF_ERROR(read_gguf_rope_scaling(g, p, &c));
  FT_ASSIGN_OR_RETURN(c.bos_id, optional_token_id(g, "tokenizer.ggml.bos_token_id"));
  FT_ASSIGN_OR_RETURN(c.eos_id, optional_token_id(g, "tokenizer.ggml.eos_token_id"));
  FT_RETURN_IF_ERROR(c.validate());
  return c;
}

namespace {

Result<ModelArch> arch_from_hf(const json& j) {
  std::string name;
  if (auto a = j.find("architectures"); a != j.end() && a->is_array() && !a->empty() && (*a)[0].is_string())
    name = (*a)[0].get<std::string>();
  std::string model_type = j.value("model_type", std::string());
  if (name == "LlamaForCausalLM" || (name.empty() && model_type == "llama")) return ModelArch::kLlama;
  // Mistral is Llama with a sliding attention window (see config_from_hf_object).
  if (name == "MistralForCausalLM" || (name.empty() && model_type == "mistral")) return ModelArch::kLlama;
  if (name == "Qwen2ForCausalLM" || (name.empty() && model_type == "qwen2")) return ModelArch::kQwen2;
  if (name == "Qwen3ForCausalLM" || (name.empty() && model_type == "qwen3")) return ModelArch::kQwen3;
  if (name == "Qwen3MoeForCausalLM" || model_type == "qwen3_moe")
    return FT_ERROR(ErrorCode::kUnsupported, "Qwen3-MoE (Qwen3MoeForCausalLM) is not yet supported");
  return FT_ERROR(ErrorCode::kUnsupported,
                  "model {} is not supported (LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, "
                  "Qwen3ForCausalLM are)",
                  name.empty() ? model_type : name);
}

Result<uint32_t> hf_u32(const json& j, const char* key, std::optional<uint32_t> fallback = std::nullopt) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (fallback) return *fallback;
    return FT_ERROR(ErrorCode::kCorrupt, "config.json: {} is missing", key);
  }
  if (!it->is_number_unsigned() || it->get<uint64_t>() > UINT32_MAX)
    return FT_ERROR(ErrorCode::kCorrupt, "config.json: {} is not an unsigned 32-bit integer", key);
  return it->get<uint32_t>();
}

Result<float> hf_float(const json& j, const char* key, float fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_number()) return FT_ERROR(ErrorCode::kCorrupt, "config.json: {} is not a number", key);
  return it->get<float>();
}

std::optional<int32_t> hf_token_id(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  const json& v = it->is_array() && !it->empty() ? (*it)[0] : *it;
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > INT32_MAX) return std::nullopt;
  return v.get<int32_t>();
}

Status hf_rope_scaling(const json& j, ModelConfig* c) {
  // transformers 5 writes rope_parameters (theta and scaling together); older
  // configs write rope_scaling.
  auto it = j.find("rope_scaling");
  if (it == j.end() || it->is_null()) it = j.find("rope_parameters");
  if (it == j.end() || it->is_null()) return Status();
  if (!it->is_object()) return FT_ERROR(ErrorCode::kCorrupt, "config.json: rope_scaling is not an object");
  const json& r = *it;
  std::string type = r.value("rope_type", r.value("type", std::string("default")));
  RopeScaling& s = c->rope_scaling;
  FT_ASSIGN_OR_RETURN(s.factor, hf_float(r, "factor", 1.0f));
  FT_ASSIGN_OR_RETURN(s.original_max_positions, hf_u32(r, "original_max_position_embeddings", 0u));
  if (type == "default") {
    s.type = RopeScalingType::kNone;
  } else if (type == "linear") {
    s.type = RopeScalingType::kLinear;
  } else if (type == "yarn") {
    s.type = RopeScalingType::kYarn;
    FT_ASSIGN_OR_RETURN(s.beta_fast, hf_float(r, "beta_fast", 32.0f));
    FT_ASSIGN_OR_RETURN(s.beta_slow, hf_float(r, "beta_slow", 1.0f));
  } else if (type == "llama3") {
    s.type = RopeScalingType::kLlama3;
    FT_ASSIGN_OR_RETURN(s.low_freq_factor, hf_float(r, "low_freq_factor", 1.0f));
    FT_ASSIGN_OR_RETURN(s.high_freq_factor, hf_float(r, "high_freq_factor", 4.0f));
    if (s.original_max_positions == 0 || !(s.high_freq_factor > s.low_freq_factor))
      return FT_ERROR(ErrorCode::kCorrupt, "config.json: llama3 rope_scaling needs original_max_position_embeddings "
                                           "and high_freq_factor > low_freq_factor");
    s.freq_factors = llama3_freq_factors(s, c->rope_theta, c->head_dim);
  } else {
    return FT_ERROR(ErrorCode::kUnsupported, "config.json: rope scaling type {} is not supported", type);
  }
  if (!(s.factor > 0.0f)) return FT_ERROR(ErrorCode::kCorrupt, "config.json: rope scaling factor {} must be positive", s.factor);
  return Status();
}

Result<ModelConfig> config_from_hf_object(const json& j) {
  ModelConfig c;
  FT_ASSIGN_OR_RETURN(c.arch, arch_from_hf(j));
  FT_ASSIGN_OR_RETURN(c.vocab_size, hf_u32(j, "vocab_size"));
  FT_ASSIGN_OR_RETURN(c.hidden_size, hf_u32(j, "hidden_size"));
  FT_ASSIGN_OR_RETURN(c.intermediate_size, hf_u32(j, "intermediate_size"));
  FT_ASSIGN_OR_RETURN(c.num_layers, hf_u32(j, "num_hidden_layers"));
  FT_ASSIGN_OR_RETURN(c.num_heads, hf_u32(j, "num_attention_heads"));
  FT_ASSIGN_OR_RETURN(c.num_kv_heads, hf_u32(j, "num_key_value_heads", c.num_heads));
  if (c.num_heads == 0) return FT_ERROR(ErrorCode::kCorrupt, "config.json: num_attention_heads is zero");
  FT_ASSIGN_OR_RETURN(c.head_dim, hf_u32(j, "head_dim", c.hidden_size / c.num_heads));
  FT_ASSIGN_OR_RETURN(c.rms_norm_eps, hf_float(j, "rms_norm_eps", 1e-6f));
  const json rope_params = j.value("rope_parameters", json::object());
  FT_ASSIGN_OR_RETURN(c.rope_theta, hf_float(j, "rope_theta", 10000.0f));
  if (rope_params.is_object() && rope_params.contains("rope_theta")) {
    FT_ASSIGN_OR_RETURN(c.rope_theta, hf_float(rope_params, "rope_theta", c.rope_theta));
  }
  FT_ASSIGN_OR_RETURN(c.max_positions, hf_u32(j, "max_position_embeddings", 0u));
  // A sliding attention window (Mistral; Qwen2 with use_sliding_window): ft
  // attends to the whole context, which is the same thing up to the window's
  // length, so the context stops there.
  const bool windowed = j.value("model_type", std::string()) == "mistral" || j.value("use_sliding_window", false);
  if (auto w = j.find("sliding_window"); windowed && w != j.end() && w->is_number_unsigned() && w->get<uint64_t>() > 0 &&
                                         (c.max_positions == 0 || w->get<uint64_t>() < c.max_positions)) {
    c.max_positions = w->get<uint32_t>();
  }
  c.tied_embeddings = j.value("tie_word_embeddings", false);
  c.qkv_bias = c.arch == ModelArch::kQwen2 || j.value("attention_bias", false);
  c.qk_norm = c.arch == ModelArch::kQwen3;
  c.rope_style = RopeStyle::kNeox;
  c.bos_id = hf_token_id(j, "bos_token_id");
  c.eos_id = hf_token_id(j, "eos_token_id");
  FT_RETURN_IF_ERROR(hf_rope_scaling(j, &c));
  FT_RETURN_IF_ERROR(c.validate());
  return c;
}

}  // namespace

Result<ModelConfig> config_from_hf_json(const std::string& text) {
  try {
    const json j = json::parse(text);
    if (!j.is_object()) return FT_ERROR(ErrorCode::kCorrupt, "config.json is not a JSON object");
    return config_from_hf_object(j);
  } catch (const json::exception& e) {
    return FT_ERROR(ErrorCode::kCorrupt, "config.json: {}", e.what());
  }
}

std::vector<float> llama3_freq_factors(const RopeScaling& s, float theta, uint32_t head_dim) {
  std::vector<float> out;
  const double old_len = s.original_max_positions;
  const double low_wavelen = old_len / s.low_freq_factor;
  const double high_wavelen = old_len / s.high_freq_factor;
  for (uint32_t i = 0; i < head_dim / 2; ++i) {
    const double freq = std::pow(static_cast<double>(theta), -2.0 * i / head_dim);
    const double wavelen = 2.0 * std::numbers::pi / freq;
    double divisor;
    if (wavelen < high_wavelen) {
      divisor = 1.0;
    } else if (wavelen > low_wavelen) {
      divisor = s.factor;
    } else {
      const double smooth = (old_len / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      divisor = 1.0 / ((1.0 - smooth) / s.factor + smooth);
    }
    out.push_back(static_cast<float>(divisor));
  }
  return out;
}

}  // namespace ft

#include "runtime/model/synth.h"

#include <cmath>
#include <filesystem>

#include "runtime/base/files.h"
#include "runtime/model/tensor_names.h"
#include "runtime/model/tokenizer_gguf.h"

namespace ft {

namespace {

namespace fs = std::filesystem;

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t hash_name(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Norm weights are ones (so activations keep their scale); everything else
// is uniform noise with standard deviation 0.02, each row seeded on its own
// so rows can be produced in any order.
RowSource random_rows(const std::string& name, uint64_t seed, uint64_t row_len) {
  const bool is_norm = name.find("norm") != std::string::npos;
  const uint64_t base = seed ^ hash_name(name);
  return [is_norm, base, row_len](uint64_t row, float* out) {
    if (is_norm) {
      std::fill(out, out + row_len, 1.0f);
      return Status();
    }
    uint64_t state = base + row * 0xD1B54A32D192ED03ull;
    const float amplitude = 0.02f * std::sqrt(3.0f);
    for (uint64_t i = 0; i < row_len; ++i) {
      const float u = static_cast<float>(splitmix64(state) >> 40) / static_cast<float>(1u << 24);
      out[i] = (2.0f * u - 1.0f) * amplitude;
    }
    return Status();
  };
}

Status copy_beside(const std::string& src, const std::string& out_dir, const std::string& name) {
  const fs::path dst = fs::path(out_dir) / name;
  std::error_code ec;
  if (fs::exists(dst, ec) && fs::equivalent(src, dst, ec)) return Status();
  FT_ASSIGN_OR_RETURN(std::string text, read_file(src));
  return write_file_atomic(dst.string(), text.data(), text.size());
}

}  // namespace

Result<ModelConfig> synth_config(const SynthOptions& o, uint32_t vocab_size) {
  ModelConfig c;
  c.arch = o.arch;
  c.vocab_size = vocab_size;
  c.hidden_size = o.hidden;
  c.intermediate_size = o.intermediate;
  c.num_layers = o.layers;
  c.num_heads = o.heads;
  c.num_kv_heads = o.kv_heads;
  c.head_dim = o.head_dim;
  c.rms_norm_eps = 1e-6f;
  c.rope_theta = o.arch == ModelArch::kLlama ? 500000.0f : 1000000.0f;
  c.max_positions = o.context_length;
  c.tied_embeddings = o.tied_embeddings;
  c.qkv_bias = o.arch == ModelArch::kQwen2;
  c.qk_norm = o.arch == ModelArch::kQwen3;
  c.rope_style = o.arch == ModelArch::kLlama ? RopeStyle::kNorm : RopeStyle::kNeox;
  FT_RETURN_IF_ERROR(c.validate());
  return c;
}

Status synth_model(const SynthOptions& o) {
  TokenizerSources src;
  FT_ASSIGN_OR_RETURN(src.tokenizer_json, read_file(o.tokenizer_json_path));
  if (o.tokenizer_config_path) {
    FT_ASSIGN_OR_RETURN(src.tokenizer_config_json, read_file(*o.tokenizer_config_path));
  }
  src.pre = o.arch == ModelArch::kLlama ? "llama-bpe" : "qwen2";
  FT_ASSIGN_OR_RETURN(TokenizerMetadata tokenizer, tokenizer_metadata_from_hf(src));
  FT_ASSIGN_OR_RETURN(ModelConfig config, synth_config(o, tokenizer.vocab_size));

  GgufWriter writer;
  set_model_metadata(writer, config, fmt::format("ft-synth-{}", model_arch_name(o.arch)), o.type);
  for (auto& [key, value] : tokenizer.keys) writer.set(key, std::move(value));
  const bool has_output = !config.tied_embeddings;
  std::vector<ExpectedTensor> tensors;
  for (auto& e : expected_tensors(config))
    if (e.name != "output.weight" || has_output) tensors.push_back(std::move(e));
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& e = tensors[i];
    std::string note;
    const GgmlType type = choose_tensor_type(o.type, e.name, e.shape, config, has_output, &note);
    if (!note.empty() && o.callbacks.note) o.callbacks.note(note);
    RowSource rows = random_rows(e.name, o.seed, e.shape[0]);
    if (o.callbacks.on_tensor) rows = with_progress(std::move(rows), o.callbacks, i, tensors.size(), e.name, type);
    FT_RETURN_IF_ERROR(add_encoded_tensor(writer, e.name, type, e.shape, std::move(rows)));
  }
  FT_RETURN_IF_ERROR(writer.write(o.output_path));
  if (o.tokenizer_config_path) {
    const std::string out_dir = fs::absolute(o.output_path).parent_path().string();
    FT_RETURN_IF_ERROR(copy_beside(o.tokenizer_json_path, out_dir, "tokenizer.json"));
    FT_RETURN_IF_ERROR(copy_beside(*o.tokenizer_config_path, out_dir, "tokenizer_config.json"));
  }
  return Status();
}

}  // namespace ft

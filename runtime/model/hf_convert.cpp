#include "runtime/model/hf_convert.h"

#include <filesystem>

#include "runtime/base/files.h"
#include "runtime/model/tensor_names.h"
#include "runtime/model/tokenizer_gguf.h"
#include "runtime/model/weights.h"

namespace ft {

namespace {

namespace fs = std::filesystem;

Result<std::optional<std::string>> read_optional(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::optional<std::string>();
  FT_ASSIGN_OR_RETURN(std::string text, read_file(path));
  return std::optional<std::string>(std::move(text));
}

Result<TokenizerMetadata> read_tokenizer(const std::string& dir, const ModelConfig& config) {
  TokenizerSources src;
  FT_ASSIGN_OR_RETURN(src.tokenizer_json, read_file(dir + "/tokenizer.json"));
  FT_ASSIGN_OR_RETURN(src.tokenizer_config_json, read_optional(dir + "/tokenizer_config.json"));
  FT_ASSIGN_OR_RETURN(src.chat_template, read_optional(dir + "/chat_template.jinja"));
  src.pre = config.arch == ModelArch::kLlama ? "llama-bpe" : "qwen2";
  src.min_vocab_size = config.vocab_size;
  src.fallback_bos_id = config.bos_id;
  src.fallback_eos_id = config.eos_id;
  FT_ASSIGN_OR_RETURN(TokenizerMetadata meta, tokenizer_metadata_from_hf(src));
  if (meta.vocab_size > config.vocab_size)
    return FT_ERROR(ErrorCode::kCorrupt, "the tokenizer has {} tokens but the model only {} embedding rows",
                    meta.vocab_size, config.vocab_size);
  return meta;
}

bool needs_rope_permutation(const ModelConfig& c, const std::string& name) {
  return c.arch == ModelArch::kLlama &&
         (name.ends_with(".attn_q.weight") || name.ends_with(".attn_k.weight") || name.ends_with(".attn_q.bias") ||
          name.ends_with(".attn_k.bias"));
}

// Rows of the source weight, decoded to f32, with the llama q/k permutation.
RowSource source_rows(const Weight& w, const ModelConfig& c) {
  const uint64_t row_len = w.shape[0];
  const uint64_t row_bytes = *ggml_bytes(w.type, row_len);
  const bool permute = needs_rope_permutation(c, w.name);
  if (permute && w.shape.size() == 1) {  // a bias: permute its elements
    return [&w, &c, row_len](uint64_t, float* out) -> Status {
      std::vector<float> tmp(row_len);
      FT_RETURN_IF_ERROR(dequantize_row(w.type, w.data, tmp.data(), row_len));
      for (uint64_t i = 0; i < row_len; ++i) out[i] = tmp[llama_rope_source_row(i, c.head_dim)];
      return Status();
    };
  }
  return [&w, &c, row_len, row_bytes, permute](uint64_t row, float* out) {
    const uint64_t src = permute ? llama_rope_source_row(row, c.head_dim) : row;
    return dequantize_row(w.type, w.data.subspan(src * row_bytes, row_bytes), out, row_len);
  };
}

}  // namespace

RowSource with_progress(RowSource rows, const ConvertCallbacks& callbacks, size_t index, size_t count,
                        const std::string& name, GgmlType type) {
  return [rows = std::move(rows), callbacks, index, count, name, type](uint64_t row, float* out) {
    if (row == 0) callbacks.on_tensor(index, count, name, type);
    return rows(row, out);
  };
}

uint64_t llama_rope_source_row(uint64_t row, uint32_t head_dim) {
  const uint64_t head = row / head_dim, i = row % head_dim;
  return head * head_dim + (i % 2) * (head_dim / 2) + i / 2;
}

Status convert_hf_to_gguf(const ConvertOptions& o) {
  FT_ASSIGN_OR_RETURN(WeightSet weights, WeightSet::open(o.input_dir));
  ModelConfig config = weights.config();
  FT_ASSIGN_OR_RETURN(TokenizerMetadata tokenizer, read_tokenizer(o.input_dir, config));

  GgufWriter writer;
  set_model_metadata(writer, config, fs::path(o.input_dir).filename().string(), o.type);
  for (auto& [key, value] : tokenizer.keys) writer.set(key, std::move(value));

  const bool has_output = !config.tied_embeddings;
  std::vector<const Weight*> order;
  for (const auto& e : expected_tensors(config))
    if (e.name != "output.weight" || has_output) order.push_back(weights.find(e.name));
  for (size_t i = 0; i < order.size(); ++i) {
    const Weight& w = *order[i];
    std::string note;
    const GgmlType type = choose_tensor_type(o.type, w.name, w.shape, config, has_output, &note);
    if (!note.empty() && o.callbacks.note) o.callbacks.note(note);
    RowSource rows = source_rows(w, config);
    if (o.callbacks.on_tensor) rows = with_progress(std::move(rows), o.callbacks, i, order.size(), w.name, type);
    FT_RETURN_IF_ERROR(add_encoded_tensor(writer, w.name, type, w.shape, std::move(rows)));
  }
  if (!config.rope_scaling.freq_factors.empty()) {
    const std::vector<float> factors = config.rope_scaling.freq_factors;
    FT_RETURN_IF_ERROR(add_encoded_tensor(writer, "rope_freqs.weight", GgmlType::kF32, {factors.size()},
                                          [factors](uint64_t, float* out) {
                                            std::copy(factors.begin(), factors.end(), out);
                                            return Status();
                                          }));
  }
  return writer.write(o.output_path);
}

}  // namespace ft

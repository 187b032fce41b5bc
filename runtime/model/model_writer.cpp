#include "runtime/model/model_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <memory>

#include "runtime/model/quantize.h"

namespace ft {

namespace {

struct FileTypeRow {
  ModelFileType type;
  const char* name;
  uint32_t id;
};

constexpr FileTypeRow kFileTypes[] = {
    {ModelFileType::kF32, "f32", 0},        {ModelFileType::kF16, "f16", 1},
    {ModelFileType::kBF16, "bf16", 32},     {ModelFileType::kQ8_0, "q8_0", 7},
    {ModelFileType::kQ4_0, "q4_0", 2},      {ModelFileType::kQ4_K_M, "q4_k_m", 15},
    {ModelFileType::kQ5_K_M, "q5_k_m", 17}, {ModelFileType::kQ6_K, "q6_k", 18},
};

const FileTypeRow& row_of(ModelFileType t) {
  for (const auto& r : kFileTypes)
    if (r.type == t) return r;
  return kFileTypes[0];
}

// Layers that get more bits in the _M recipes.
bool use_more_bits(int64_t layer, int64_t n_layers) {
  return layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2;
}

std::optional<int64_t> layer_of(const std::string& name) {
  if (!name.starts_with("blk.")) return std::nullopt;
  int64_t layer = 0;
  const char* begin = name.data() + 4;
  const auto [end, ec] = std::from_chars(begin, name.data() + name.size(), layer);
  if (ec != std::errc() || end == begin) return std::nullopt;
  return layer;
}

GgmlType fallback_for_row(GgmlType type, uint64_t row, std::string* note, const std::string& name) {
  const auto& traits = ggml_traits(type);
  if (row % traits.block_size == 0) return type;
  GgmlType next = GgmlType::kF16;
  if (traits.block_size == static_cast<uint32_t>(kQK_K))
    next = type == GgmlType::kQ4_K ? GgmlType::kQ5_0 : GgmlType::kQ8_0;
  if (row % ggml_traits(next).block_size != 0) next = GgmlType::kF16;
  if (note)
    *note = fmt::format("{}: rows of {} are not a multiple of {}; using {} instead of {}", name, row,
                        traits.block_size, ggml_type_name(next), traits.name);
  return next;
}

}  // namespace

Result<ModelFileType> parse_model_file_type(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const auto& r : kFileTypes)
    if (lower == r.name) return r.type;
  return FT_ERROR(ErrorCode::kInvalidArgument,
                  "unknown type {} (f32, f16, bf16, q8_0, q4_0, q4_k_m, q5_k_m, q6_k)", name);
}

const char* model_file_type_name(ModelFileType type) { return row_of(type).name; }
uint32_t model_file_type_id(ModelFileType type) { return row_of(type).id; }

GgmlType choose_tensor_type(ModelFileType file_type, const std::string& name, const std::vector<uint64_t>& shape,
                            const ModelConfig& config, bool has_output, std::string* note) {
  if (note) note->clear();
  if (shape.size() < 2) return GgmlType::kF32;
  const bool is_output = name == "output.weight" || (!has_output && name == "token_embd.weight");
  const auto layer = layer_of(name);
  const bool more_bits = layer && (name.ends_with(".attn_v.weight") || name.ends_with(".ffn_down.weight")) &&
                         use_more_bits(*layer, config.num_layers);
  GgmlType t = GgmlType::kF32;
  switch (file_type) {
    case ModelFileType::kF32: t = GgmlType::kF32; break;
    case ModelFileType::kF16: t = GgmlType::kF16; break;
    case ModelFileType::kBF16: t = GgmlType::kBF16; break;
    case ModelFileType::kQ8_0: t = GgmlType::kQ8_0; break;
    case ModelFileType::kQ6_K: t = GgmlType::kQ6_K; break;
    case ModelFileType::kQ4_0: t = is_output ? GgmlType::kQ6_K : GgmlType::kQ4_0; break;
    case ModelFileType::kQ4_K_M:
      t = is_output || more_bits ? GgmlType::kQ6_K : GgmlType::kQ4_K;
      break;
    case ModelFileType::kQ5_K_M:
      t = is_output || more_bits ? GgmlType::kQ6_K : GgmlType::kQ5_K;
      break;
  }
  return fallback_for_row(t, shape[0], note, name);
}

void set_model_metadata(GgufWriter& w, const ModelConfig& c, const std::string& name, ModelFileType file_type) {
  const std::string p = std::string(model_arch_name(c.arch)) + ".";
  w.set("general.architecture", GgufValue(model_arch_name(c.arch)));
  w.set("general.name", GgufValue(name));
  w.set("general.file_type", GgufValue(model_file_type_id(file_type)));
  w.set("general.quantization_version", GgufValue(uint32_t{2}));
  w.set(p + "vocab_size", GgufValue(c.vocab_size));
  w.set(p + "context_length", GgufValue(c.max_positions));
  w.set(p + "embedding_length", GgufValue(c.hidden_size));
  w.set(p + "block_count", GgufValue(c.num_layers));
  w.set(p + "feed_forward_length", GgufValue(c.intermediate_size));
  w.set(p + "attention.head_count", GgufValue(c.num_heads));
  w.set(p + "attention.head_count_kv", GgufValue(c.num_kv_heads));
  w.set(p + "attention.key_length", GgufValue(c.head_dim));
  w.set(p + "attention.value_length", GgufValue(c.head_dim));
  w.set(p + "attention.layer_norm_rms_epsilon", GgufValue(c.rms_norm_eps));
  w.set(p + "rope.freq_base", GgufValue(c.rope_theta));
  w.set(p + "rope.dimension_count", GgufValue(c.head_dim));
  const RopeScaling& s = c.rope_scaling;
  if (s.type == RopeScalingType::kLinear || s.type == RopeScalingType::kYarn) {
    w.set(p + "rope.scaling.type", GgufValue(rope_scaling_name(s.type)));
    w.set(p + "rope.scaling.factor", GgufValue(s.factor));
  }
  if (s.type == RopeScalingType::kYarn) {
    w.set(p + "rope.scaling.original_context_length", GgufValue(s.original_max_positions));
    w.set(p + "rope.scaling.yarn_beta_fast", GgufValue(s.beta_fast));
    w.set(p + "rope.scaling.yarn_beta_slow", GgufValue(s.beta_slow));
  }
}

Status add_encoded_tensor(GgufWriter& writer, const std::string& name, GgmlType type, std::vector<uint64_t> shape,
                          RowSource rows) {
  uint64_t n_rows = 1;
  for (size_t i = 1; i < shape.size(); ++i) n_rows *= shape[i];
  const uint64_t row_len = shape.empty() ? 0 : shape[0];
  const auto row_bytes = ggml_bytes(type, row_len);
  if (!row_bytes)
    return FT_ERROR(ErrorCode::kInvalidArgument, "tensor {}: rows of {} cannot be stored as {}", name, row_len,
                    ggml_type_name(type));
  auto producer = [=, rows = std::move(rows)](const GgufSink& sink) -> Status {
    // About 4 MiB of encoded rows per write.
    const uint64_t chunk_rows = std::max<uint64_t>(1, (4u << 20) / std::max<uint64_t>(*row_bytes, 1));
    // Rows are produced and encoded in parallel (the k-quant searches are the
    // slow part of a conversion); the bytes do not depend on the order.
    std::vector<uint8_t> out;
    std::vector<Status> errors;
    for (uint64_t r0 = 0; r0 < n_rows; r0 += chunk_rows) {
      const uint64_t count = std::min(chunk_rows, n_rows - r0);
      out.resize(count * *row_bytes);
      errors.assign(count, Status());
#pragma omp parallel
      {
        std::vector<float> row(row_len);
#pragma omp for schedule(dynamic, 16)
        for (uint64_t r = 0; r < count; ++r) {
          Status s = rows(r0 + r, row.data());
          if (s.ok())
            s = encode_row(type, row.data(), row_len, std::span<uint8_t>(out).subspan(r * *row_bytes, *row_bytes));
          if (!s.ok()) errors[r] = s.with_context(fmt::format("tensor {} row {}", name, r0 + r));
        }
      }
      for (const Status& s : errors) FT_RETURN_IF_ERROR(s);
      FT_RETURN_IF_ERROR(sink(out));
    }
    return Status();
  };
  return writer.add_tensor(name, type, std::move(shape), std::move(producer));
}

}  // namespace ft

// Shared by convert and synth: the output type recipes, the model keys a
// GGUF file carries for a ModelConfig, and tensors encoded row by row while
// the file is written (one chunk of rows in memory at a time).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/status.h"
#include "runtime/model/ggml_types.h"
#include "runtime/model/gguf_writer.h"
#include "runtime/model/model_config.h"

namespace ft {

// --type of convert/synth: a whole-model recipe, not a single tensor type.
enum class ModelFileType { kF32, kF16, kBF16, kQ8_0, kQ4_0, kQ4_K_M, kQ5_K_M, kQ6_K };

Result<ModelFileType> parse_model_file_type(std::string_view name);
const char* model_file_type_name(ModelFileType type);
// The llama.cpp general.file_type value (e.g. 15 for Q4_K_M).
uint32_t model_file_type_id(ModelFileType type);

// The type one tensor gets under `file_type`. 1-D tensors stay F32. Q4_K_M and
// Q5_K_M use Q6_K for the output matrix (or the embeddings when tied) and for
// attn_v and ffn_down in the first and last eighth of the layers and every
// third layer between; Q4_0 gives the output matrix Q6_K. A K-quant row whose
// length is not a multiple of 256 falls back (Q4_K -> Q5_0, Q5_K/Q6_K -> Q8_0),
// and a 32-block type on rows not a multiple of 32 to F16; `note` then
// explains the choice.
GgmlType choose_tensor_type(ModelFileType file_type, const std::string& name, const std::vector<uint64_t>& shape,
                            const ModelConfig& config, bool has_output, std::string* note);

// general.* and <arch>.* keys for `config`.
void set_model_metadata(GgufWriter& writer, const ModelConfig& config, const std::string& name,
                        ModelFileType file_type);

// Fills one row (shape[0] floats) of a tensor.
using RowSource = std::function<Status(uint64_t row, float* out)>;

// Adds a tensor whose rows come from `rows` and are encoded to `type` while
// the writer streams the file.
Status add_encoded_tensor(GgufWriter& writer, const std::string& name, GgmlType type, std::vector<uint64_t> shape,
                          RowSource rows);

}  // namespace ft

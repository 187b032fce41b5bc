// The weights of one model, by internal (GGUF) name, from either a GGUF file
// or an HF safetensors folder (config.json + model.safetensors[.index.json]).
//
// open() checks that every tensor the config needs is present with the shape
// the config implies and a dtype ft can read, and names the first one that is
// not. Without an output.weight the embeddings are tied and "output.weight"
// resolves to token_embd's data. Spans point into the read-only mappings the
// WeightSet owns; they stay valid while it lives. Immutable after open().
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/status.h"
#include "runtime/model/ggml_types.h"
#include "runtime/model/gguf_reader.h"
#include "runtime/model/model_config.h"
#include "runtime/model/safetensors.h"

namespace ft {

struct Weight {
  std::string name;             // internal name
  std::string source_name;      // name in the file it came from
  GgmlType type;
  std::vector<uint64_t> shape;  // ggml order (shape[0] contiguous), for both sources
  std::span<const uint8_t> data;
};

class WeightSet {
 public:
  // A GGUF file, or a folder holding config.json and safetensors.
  static Result<WeightSet> open(const std::string& path);

  const ModelConfig& config() const { return config_; }
  const std::vector<Weight>& weights() const { return weights_; }
  const Weight* find(std::string_view name) const;
  Result<const Weight*> get(std::string_view name) const;
  // The GGUF reader (metadata, tokenizer) when opened from GGUF, else null.
  const GgufReader* gguf() const { return gguf_.get(); }
  bool from_gguf() const { return gguf_ != nullptr; }

 private:
  static Result<WeightSet> open_gguf(const std::string& path);
  static Result<WeightSet> open_safetensors(const std::string& dir);
  Status add(Weight w);
  Status check_expected();

  ModelConfig config_;
  std::shared_ptr<const GgufReader> gguf_;
  std::shared_ptr<const SafetensorsModel> safetensors_;
  std::vector<Weight> weights_;
  std::map<std::string, size_t, std::less<>> index_;
};

}  // namespace ft

#include "runtime/model/weights.h"

#include <algorithm>
#include <filesystem>

#include "runtime/base/files.h"
#include "runtime/base/log.h"
#include "runtime/model/tensor_names.h"

namespace ft {

namespace fs = std::filesystem;

Result<WeightSet> WeightSet::open(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return open_safetensors(path);
  if (!fs::exists(path, ec)) return FT_ERROR(ErrorCode::kNotFound, "model {} does not exist", path);
  return open_gguf(path);
}

Result<WeightSet> WeightSet::open_gguf(const std::string& path) {
  FT_ASSIGN_OR_RETURN(GgufReader reader, GgufReader::open(path));
  WeightSet w;
  w.gguf_ = std::make_shared<const GgufReader>(std::move(reader));
  auto config = config_from_gguf(*w.gguf_);
  if (!config.ok()) {
    Status s = config.status();
    return s.with_context(path);
  }
  w.config_ = std::move(config).value();
  for (const auto& t : w.gguf_->tensors()) {
    auto data = w.gguf_->tensor_data(t);
    if (!data.ok()) {
      Status s = data.status();
      return s.with_context(path);
    }
    FT_RETURN_IF_ERROR(w.add({t.name, t.name, t.type, t.shape, *data}));
  }
  FT_RETURN_IF_ERROR(w.check_expected().with_context(path));
  return w;
}

Result<WeightSet> WeightSet::open_safetensors(const std::string& dir) {
  FT_ASSIGN_OR_RETURN(std::string config_text, read_file(dir + "/config.json"));
  WeightSet w;
  auto config = config_from_hf_json(config_text);
  if (!config.ok()) {
    Status s = config.status();
    return s.with_context(dir);
  }
  w.config_ = std::move(config).value();
  FT_ASSIGN_OR_RETURN(SafetensorsModel model, SafetensorsModel::open_dir(dir));
  w.safetensors_ = std::make_shared<const SafetensorsModel>(std::move(model));
  for (const auto& hf_name : w.safetensors_->names()) {
    auto internal = hf_to_internal_name(hf_name);
    if (!internal) {
      log::debug("{}: tensor {} is not used", dir, hf_name);
      continue;
    }
    const SafetensorsTensor* t = w.safetensors_->find(hf_name);
    FT_ASSIGN_OR_RETURN(auto data, w.safetensors_->data(hf_name));
    std::vector<uint64_t> shape(t->shape.rbegin(), t->shape.rend());
    FT_RETURN_IF_ERROR(w.add({*internal, hf_name, *t->type, std::move(shape), data}));
  }
  FT_RETURN_IF_ERROR(w.check_expected().with_context(dir));
  return w;
}

Status WeightSet::add(Weight w) {
  if (!index_.emplace(w.name, weights_.size()).second)
    return FT_ERROR(ErrorCode::kCorrupt, "two tensors map to {} (the second is {})", w.name, w.source_name);
  weights_.push_back(std::move(w));
  return Status();
}

Status WeightSet::check_expected() {
  for (const auto& e : expected_tensors(config_)) {
    const Weight* w = find(e.name);
    if (!w && !e.required) continue;
    if (!w) return FT_ERROR(ErrorCode::kCorrupt, "tensor {} is missing", e.name);
    if (w->shape != e.shape)
      return FT_ERROR(ErrorCode::kCorrupt, "tensor {} ({}) has shape {}, the config needs {}", e.name, w->source_name,
                      shape_string(w->shape), shape_string(e.shape));
  }
  if (!find("output.weight")) {
    config_.tied_embeddings = true;
    Weight tied = *find("token_embd.weight");
    tied.name = "output.weight";
    FT_RETURN_IF_ERROR(add(std::move(tied)));
  } else {
    // A checkpoint that says "tied" but still ships lm_head: use what it ships.
    config_.tied_embeddings = false;
  }
  return Status();
}

const Weight* WeightSet::find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &weights_[it->second];
}

Result<const Weight*> WeightSet::get(std::string_view name) const {
  const Weight* w = find(name);
  if (!w) return FT_ERROR(ErrorCode::kNotFound, "model has no tensor {}", name);
  return w;
}

}  // namespace ft

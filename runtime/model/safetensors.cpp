#include "runtime/model/safetensors.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "runtime/base/files.h"

namespace ft {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Header size limit from the format's own reference implementation (100 MB):
// a larger header is hostile, not a model.
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

struct Dtype {
  std::string_view name;
  uint32_t bytes;
  std::optional<GgmlType> type;
};

constexpr Dtype kDtypes[] = {
    {"F32", 4, GgmlType::kF32}, {"F16", 2, GgmlType::kF16}, {"BF16", 2, GgmlType::kBF16},
    {"F64", 8, std::nullopt},   {"I64", 8, std::nullopt},   {"I32", 4, std::nullopt},
    {"I16", 2, std::nullopt},   {"I8", 1, std::nullopt},    {"U8", 1, std::nullopt},
    {"U16", 2, std::nullopt},   {"U32", 4, std::nullopt},   {"U64", 8, std::nullopt},
    {"BOOL", 1, std::nullopt},  {"F8_E4M3", 1, std::nullopt}, {"F8_E5M2", 1, std::nullopt},
};

const Dtype* find_dtype(std::string_view name) {
  for (const auto& d : kDtypes)
    if (d.name == name) return &d;
  return nullptr;
}

Result<SafetensorsTensor> parse_entry(const std::string& name, const json& e, uint64_t data_size) {
  if (!e.is_object()) return FT_ERROR(ErrorCode::kCorrupt, "tensor {}: entry is not an object", name);
  auto dt = e.find("dtype");
  auto sh = e.find("shape");
  auto off = e.find("data_offsets");
  if (dt == e.end() || !dt->is_string() || sh == e.end() || !sh->is_array() || off == e.end() ||
      !off->is_array() || off->size() != 2)
    return FT_ERROR(ErrorCode::kCorrupt, "tensor {}: needs dtype, shape and two data_offsets", name);
  SafetensorsTensor t;
  t.name = name;
  t.dtype = dt->get<std::string>();
  const Dtype* dtype = find_dtype(t.dtype);
  if (!dtype) return FT_ERROR(ErrorCode::kCorrupt, "tensor {}: unknown dtype {}", name, t.dtype);
  t.type = dtype->type;
  uint64_t n = 1;
  for (const auto& d : *sh) {
    if (!d.is_number_unsigned()) return FT_ERROR(ErrorCode::kCorrupt, "tensor {}: shape has a non-integer", name);
    const uint64_t dim = d.get<uint64_t>();
    if (__builtin_mul_overflow(n, dim, &n)) return FT_ERROR(ErrorCode::kCorrupt, "tensor {}: size overflows", name);
    t.shape.push_back(dim);
  }
  if (!(*off)[0].is_number_unsigned() || !(*off)[1].is_number_unsigned())
    return FT_ERROR(ErrorCode::kCorrupt, "tensor {}: data_offsets are not integers", name);
  t.begin = (*off)[0].get<uint64_t>();
  t.end = (*off)[1].get<uint64_t>();
  uint64_t bytes;
  if (__builtin_mul_overflow(n, static_cast<uint64_t>(dtype->bytes), &bytes))
    return FT_ERROR(ErrorCode::kCorrupt, "tensor {}: size overflows", name);
  if (t.begin > t.end || t.end > data_size)
    return FT_ERROR(ErrorCode::kCorrupt, "tensor {}: data_offsets [{}, {}) outside the {}-byte data buffer", name,
                    t.begin, t.end, data_size);
  if (t.end - t.begin != bytes)
    return FT_ERROR(ErrorCode::kCorrupt, "tensor {}: {} bytes of data for a {} tensor of {} elements", name,
                    t.end - t.begin, t.dtype, n);
  return t;
}

}  // namespace

Result<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  FT_ASSIGN_OR_RETURN(auto file, MappedFile::open(path));
  auto r = parse(std::move(file));
  if (!r.ok()) {
    Status s = r.status();
    return s.with_context(path);
  }
  return r;
}

Result<SafetensorsFile> SafetensorsFile::from_memory(std::span<const uint8_t> bytes) {
  return parse(MappedFile::borrow(bytes, "<memory>"));
}

Result<SafetensorsFile> SafetensorsFile::parse(std::shared_ptr<const MappedFile> file) {
  const auto bytes = file->bytes();
  if (bytes.size() < 8)
    return FT_ERROR(ErrorCode::kCorrupt, "not a safetensors file: only {} bytes", bytes.size());
  uint64_t header_len;
  std::memcpy(&header_len, bytes.data(), 8);
  if (header_len > kMaxHeaderBytes || header_len > bytes.size() - 8)
    return FT_ERROR(ErrorCode::kCorrupt, "safetensors header length {} exceeds the {}-byte file", header_len,
                    bytes.size());
  const char* text = reinterpret_cast<const char*>(bytes.data() + 8);
  json header;
  try {
    header = json::parse(text, text + header_len);
  } catch (const json::exception& e) {
    return FT_ERROR(ErrorCode::kCorrupt, "safetensors header is not valid JSON: {}", e.what());
  }
  if (!header.is_object()) return FT_ERROR(ErrorCode::kCorrupt, "safetensors header is not a JSON object");
  SafetensorsFile f;
  f.file_ = std::move(file);
  f.data_start_ = 8 + header_len;
  const uint64_t data_size = bytes.size() - f.data_start_;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) return FT_ERROR(ErrorCode::kCorrupt, "__metadata__ is not an object");
      for (const auto& [k, v] : entry.items())
        if (v.is_string()) f.metadata_[k] = v.get<std::string>();
      continue;
    }
    FT_ASSIGN_OR_RETURN(SafetensorsTensor t, parse_entry(name, entry, data_size));
    f.index_.emplace(t.name, f.tensors_.size());
    f.tensors_.push_back(std::move(t));
  }
  return f;
}

const SafetensorsTensor* SafetensorsFile::find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

Result<std::span<const uint8_t>> SafetensorsFile::data(std::string_view name) const {
  const SafetensorsTensor* t = find(name);
  if (!t) return FT_ERROR(ErrorCode::kNotFound, "tensor {} is not in {}", name, path());
  if (!t->type)
    return FT_ERROR(ErrorCode::kUnsupported, "tensor {} has dtype {}; ft reads F32, F16 and BF16", name, t->dtype);
  return file_->bytes().subspan(data_start_ + t->begin, t->end - t->begin);
}

namespace {

Result<std::vector<std::string>> shards_from_index(const std::string& dir, std::map<std::string, std::string>* weight_map) {
  const std::string index_path = dir + "/model.safetensors.index.json";
  FT_ASSIGN_OR_RETURN(std::string text, read_file(index_path));
  std::set<std::string> shards;
  try {
    const json index = json::parse(text);
    const json& map = index.at("weight_map");
    if (!map.is_object()) return FT_ERROR(ErrorCode::kCorrupt, "{}: weight_map is not an object", index_path);
    for (const auto& [name, shard] : map.items()) {
      const std::string file = shard.get<std::string>();
      if (file.empty() || file.find('/') != std::string::npos || file == "." || file == "..")
        return FT_ERROR(ErrorCode::kCorrupt, "{}: shard name \"{}\" is not a plain file name", index_path, file);
      (*weight_map)[name] = file;
      shards.insert(file);
    }
  } catch (const json::exception& e) {
    return FT_ERROR(ErrorCode::kCorrupt, "{}: {}", index_path, e.what());
  }
  return std::vector<std::string>(shards.begin(), shards.end());
}

}  // namespace

Result<SafetensorsModel> SafetensorsModel::open_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return FT_ERROR(ErrorCode::kNotFound, "{} is not a directory", dir);
  std::vector<std::string> shards;
  std::map<std::string, std::string> weight_map;
  if (fs::exists(dir + "/model.safetensors.index.json", ec)) {
    FT_ASSIGN_OR_RETURN(shards, shards_from_index(dir, &weight_map));
  } else if (fs::exists(dir + "/model.safetensors", ec)) {
    shards.push_back("model.safetensors");
  } else {
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.path().extension() == ".safetensors") shards.push_back(entry.path().filename().string());
    std::sort(shards.begin(), shards.end());
  }
  if (shards.empty()) return FT_ERROR(ErrorCode::kNotFound, "no .safetensors files in {}", dir);
  SafetensorsModel m;
  for (const auto& shard : shards) {
    FT_ASSIGN_OR_RETURN(SafetensorsFile f, SafetensorsFile::open(dir + "/" + shard));
    for (const auto& t : f.tensors()) {
      if (!m.owner_.emplace(t.name, m.files_.size()).second)
        return FT_ERROR(ErrorCode::kCorrupt, "tensor {} is in more than one shard of {}", t.name, dir);
      auto it = weight_map.find(t.name);
      if (!weight_map.empty() && (it == weight_map.end() || it->second != shard))
        return FT_ERROR(ErrorCode::kCorrupt, "tensor {} is in {}, but the index does not place it there", t.name,
                        shard);
    }
    m.files_.push_back(std::move(f));
  }
  for (const auto& [name, shard] : weight_map)
    if (!m.owner_.count(name))
      return FT_ERROR(ErrorCode::kCorrupt, "the index places tensor {} in {}, which does not hold it", name, shard);
  return m;
}

std::vector<std::string> SafetensorsModel::names() const {
  std::vector<std::string> out;
  for (const auto& [name, file] : owner_) out.push_back(name);
  return out;
}

const SafetensorsTensor* SafetensorsModel::find(std::string_view name) const {
  auto it = owner_.find(name);
  return it == owner_.end() ? nullptr : files_[it->second].find(name);
}

Result<std::span<const uint8_t>> SafetensorsModel::data(std::string_view name) const {
  auto it = owner_.find(name);
  if (it == owner_.end()) return FT_ERROR(ErrorCode::kNotFound, "tensor {} is not in the model", name);
  return files_[it->second].data(name);
}

}  // namespace ft

// Helpers for the runtime/model tests: temporary folders, raw byte builders
// for hand-made (and deliberately broken) files, small HF model folders.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runtime/base/files.h"
#include "runtime/model/ggml_types.h"

namespace ft::test {

class TempDir {
 public:
  TempDir() { path_ = make_temp_dir("ft-model-test-").value(); }
  ~TempDir() { (void)remove_tree(path_); }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Little-endian byte builder for hand-written GGUF files.
class Bytes {
 public:
  template <typename T>
  Bytes& put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    data_.insert(data_.end(), p, p + sizeof(T));
    return *this;
  }
  Bytes& str(const std::string& s) {
    put<uint64_t>(s.size());
    data_.insert(data_.end(), s.begin(), s.end());
    return *this;
  }
  Bytes& raw(const std::vector<uint8_t>& b) {
    data_.insert(data_.end(), b.begin(), b.end());
    return *this;
  }
  Bytes& pad_to(size_t alignment) {
    while (data_.size() % alignment) data_.push_back(0);
    return *this;
  }
  // GGUF header: magic, version, tensor count, kv count.
  Bytes& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    data_.insert(data_.end(), {'G', 'G', 'U', 'F'});
    return put<uint32_t>(version).put<uint64_t>(n_tensors).put<uint64_t>(n_kv);
  }
  // One tensor info: name, dims, ggml type id, offset.
  Bytes& tensor(const std::string& name, const std::vector<uint64_t>& dims, uint32_t type, uint64_t offset) {
    str(name).put<uint32_t>(static_cast<uint32_t>(dims.size()));
    for (uint64_t d : dims) put<uint64_t>(d);
    return put<uint32_t>(type).put<uint64_t>(offset);
  }
  size_t size() const { return data_.size(); }
  const std::vector<uint8_t>& data() const { return data_; }

 private:
  std::vector<uint8_t> data_;
};

inline std::vector<float> gaussian(size_t n, uint32_t seed, float stddev = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

inline double relative_l2(const std::vector<float>& ref, const std::vector<float>& got) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    num += (ref[i] - got[i]) * double(ref[i] - got[i]);
    den += ref[i] * double(ref[i]);
  }
  return std::sqrt(num / den);
}

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  ASSERT_TRUE(write_file_atomic(path, bytes.data(), bytes.size()).ok()) << path;
}

inline void write_text(const std::string& path, const std::string& text) {
  ASSERT_TRUE(write_file_atomic(path, text.data(), text.size()).ok()) << path;
}

// A safetensors file assembled from named tensors (raw little-endian data).
struct StTensor {
  std::string dtype;
  std::vector<uint64_t> shape;  // safetensors order (outermost first)
  std::vector<uint8_t> data;
};

inline std::vector<uint8_t> safetensors_bytes(const std::map<std::string, StTensor>& tensors,
                                              const nlohmann::json& metadata = nullptr) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    header[name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  if (!metadata.is_null()) header["__metadata__"] = metadata;
  std::string text = header.dump();
  while (text.size() % 8) text += ' ';
  Bytes b;
  b.put<uint64_t>(text.size());
  b.raw(std::vector<uint8_t>(text.begin(), text.end()));
  for (const auto& [name, t] : tensors) b.raw(t.data);
  return b.data();
}

inline std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

inline std::vector<uint8_t> bf16_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * 2);
  for (size_t i = 0; i < v.size(); ++i) {
    const uint16_t h = f32_to_bf16(v[i]);
    std::memcpy(out.data() + 2 * i, &h, 2);
  }
  return out;
}

// Shape of a tiny model folder; arch is "llama", "qwen2" or "qwen3".
struct TinyModel {
  std::string arch = "llama";
  uint32_t vocab = 300;
  uint32_t hidden = 64;
  uint32_t intermediate = 96;
  uint32_t layers = 2;
  uint32_t heads = 4;
  uint32_t kv_heads = 2;
  uint32_t head_dim = 16;
  bool tied = false;
  bool sharded = false;
  std::string dtype = "F32";  // or BF16
};

// Writes config.json, safetensors (random weights), tokenizer.json and
// tokenizer_config.json for `m` into `dir`. Returns the HF tensors written,
// as f32, by HF name.
std::map<std::string, std::vector<float>> write_tiny_model(const std::string& dir, const TinyModel& m,
                                                           std::vector<std::string> skip = {});

// A small byte-level BPE tokenizer.json with `vocab` tokens in total: the 256
// byte symbols, a few merges, and two special added tokens at the end.
std::string tiny_tokenizer_json(uint32_t vocab);

}  // namespace ft::test

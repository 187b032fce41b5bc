// Writes the fuzz seed corpora: small valid GGUF files covering every
// metadata type and every tensor type, and small safetensors files.
//   fuzz_seeds GGUF_DIR SAFETENSORS_DIR
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/files.h"
#include "runtime/model/gguf_writer.h"

namespace {

ft::Status write_gguf_seeds(const std::string& dir) {
  using ft::GgmlType;
  using ft::GgufValue;
  FT_RETURN_IF_ERROR(ft::make_dirs(dir));
  {
    ft::GgufWriter w;
    w.set("general.architecture", GgufValue("llama"));
    w.set("llama.context_length", GgufValue(uint32_t{128}));
    w.set("llama.embedding_length", GgufValue(uint32_t{32}));
    w.set("llama.block_count", GgufValue(uint32_t{1}));
    w.set("llama.feed_forward_length", GgufValue(uint32_t{64}));
    w.set("llama.attention.head_count", GgufValue(uint32_t{2}));
    w.set("llama.attention.layer_norm_rms_epsilon", GgufValue(1e-5f));
    w.set("tokenizer.ggml.tokens", GgufValue::strings({"a", "b", "c"}));
    w.set("a.i8", GgufValue(int8_t{-1}));
    w.set("a.u16", GgufValue(uint16_t{7}));
    w.set("a.i16", GgufValue(int16_t{-7}));
    w.set("a.i64", GgufValue(int64_t{-9}));
    w.set("a.u64", GgufValue(uint64_t{9}));
    w.set("a.f64", GgufValue(0.5));
    w.set("a.bool", GgufValue(true));
    w.set("a.nested", GgufValue(ft::GgufArray{ft::GgufType::kArray, std::vector<GgufValue>{GgufValue::i32s({1})}}));
    FT_RETURN_IF_ERROR(w.add_tensor_bytes("token_embd.weight", GgmlType::kF16, {32, 3}, std::vector<uint8_t>(192, 0x3C)));
    FT_RETURN_IF_ERROR(w.write(dir + "/model.gguf"));
  }
  const GgmlType types[] = {GgmlType::kF32,  GgmlType::kF16,  GgmlType::kBF16, GgmlType::kQ8_0,
                            GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ4_K,
                            GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kQ2_K};
  for (GgmlType t : types) {
    ft::GgufWriter w;
    const auto& traits = ft::ggml_traits(t);
    std::vector<uint8_t> bytes(*ft::ggml_bytes(t, traits.block_size * 2));
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 31);
    FT_RETURN_IF_ERROR(w.add_tensor_bytes("t", t, {traits.block_size, 2}, bytes));
    FT_RETURN_IF_ERROR(w.write(dir + "/" + std::string(traits.name) + ".gguf"));
  }
  return ft::Status();
}

ft::Status write_safetensors_seed(const std::string& dir) {
  FT_RETURN_IF_ERROR(ft::make_dirs(dir));
  nlohmann::json header = {{"a", {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {0, 8}}}},
                           {"b", {{"dtype", "BF16"}, {"shape", {2, 2}}, {"data_offsets", {8, 16}}}},
                           {"c", {{"dtype", "I64"}, {"shape", {1}}, {"data_offsets", {16, 24}}}},
                           {"__metadata__", {{"format", "pt"}}}};
  const std::string text = header.dump();
  std::vector<uint8_t> bytes(8);
  const uint64_t n = text.size();
  std::memcpy(bytes.data(), &n, 8);
  bytes.insert(bytes.end(), text.begin(), text.end());
  bytes.resize(bytes.size() + 24, 0x3F);
  return ft::write_file_atomic(dir + "/model.safetensors", bytes.data(), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fuzz_seeds GGUF_DIR SAFETENSORS_DIR\n");
    return 2;
  }
  ft::Status s = write_gguf_seeds(argv[1]);
  if (s.ok()) s = write_safetensors_seed(argv[2]);
  if (!s.ok()) {
    std::fprintf(stderr, "fuzz_seeds: %s\n", s.to_string().c_str());
    return 1;
  }
  return 0;
}

#include "tests/model/model_test_util.h"

#include <fmt/format.h>

#include <algorithm>

namespace ft::test {

namespace {

using json = nlohmann::json;

// GPT-2's byte-to-unicode table: printable bytes stand for themselves, the
// rest are shifted to code points from 256 up.
std::vector<std::string> byte_symbols() {
  std::vector<std::string> out(256);
  int next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    const int cp = printable ? b : next++;
    std::string s;
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
    out[b] = s;
  }
  return out;
}

}  // namespace

std::string tiny_tokenizer_json(uint32_t vocab) {
  json v = json::object();
  const auto symbols = byte_symbols();
  uint32_t id = 0;
  for (const auto& s : symbols) v[s] = id++;
  const std::vector<std::pair<std::string, std::string>> merge_pairs = {
      {"Ġ", "t"}, {"h", "e"}, {"Ġt", "he"}, {"i", "n"}, {"Ġ", "a"}};
  json merges = json::array();
  for (const auto& [a, b] : merge_pairs) {
    merges.push_back(a + " " + b);
    if (!v.contains(a + b) && id < vocab - 2) v[a + b] = id++;
  }
  while (id < vocab - 2) {
    v[fmt::format("w{}", id)] = id;
    ++id;
  }
  json added = json::array({
      {{"id", vocab - 2}, {"content", "<|bos|>"}, {"special", true}},
      {{"id", vocab - 1}, {"content", "<|eos|>"}, {"special", true}},
  });
  json tok = {{"version", "1.0"},
              {"added_tokens", added},
              {"pre_tokenizer", {{"type", "ByteLevel"}}},
              {"model", {{"type", "BPE"}, {"vocab", v}, {"merges", merges}}}};
  return tok.dump();
}

std::map<std::string, std::vector<float>> write_tiny_model(const std::string& dir, const TinyModel& m,
                                                           std::vector<std::string> skip) {
  const std::map<std::string, std::string> arch_names = {
      {"llama", "LlamaForCausalLM"}, {"qwen2", "Qwen2ForCausalLM"}, {"qwen3", "Qwen3ForCausalLM"}};
  json config = {{"architectures", {arch_names.at(m.arch)}},
                 {"model_type", m.arch},
                 {"vocab_size", m.vocab},
                 {"hidden_size", m.hidden},
                 {"intermediate_size", m.intermediate},
                 {"num_hidden_layers", m.layers},
                 {"num_attention_heads", m.heads},
                 {"num_key_value_heads", m.kv_heads},
                 {"head_dim", m.head_dim},
                 {"rms_norm_eps", 1e-5},
                 {"rope_theta", 10000.0},
                 {"max_position_embeddings", 512},
                 {"tie_word_embeddings", m.tied},
                 {"bos_token_id", m.vocab - 2},
                 {"eos_token_id", m.vocab - 1}};
  write_text(dir + "/config.json", config.dump(2));
  write_text(dir + "/tokenizer.json", tiny_tokenizer_json(m.vocab));
  json tok_config = {{"bos_token", "<|bos|>"},
                     {"eos_token", {{"content", "<|eos|>"}}},
                     {"add_bos_token", true},
                     {"chat_template", "{% for m in messages %}{{ m.content }}{% endfor %}"}};
  write_text(dir + "/tokenizer_config.json", tok_config.dump());

  const uint64_t q = uint64_t{m.heads} * m.head_dim, kv = uint64_t{m.kv_heads} * m.head_dim;
  std::map<std::string, std::vector<uint64_t>> shapes = {
      {"model.embed_tokens.weight", {m.vocab, m.hidden}}, {"model.norm.weight", {m.hidden}}};
  if (!m.tied) shapes["lm_head.weight"] = {m.vocab, m.hidden};
  if (m.arch == "llama") shapes["model.rotary_emb.inv_freq"] = {m.head_dim / 2};
  for (uint32_t i = 0; i < m.layers; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    shapes[p + "self_attn.q_proj.weight"] = {q, m.hidden};
    shapes[p + "self_attn.k_proj.weight"] = {kv, m.hidden};
    shapes[p + "self_attn.v_proj.weight"] = {kv, m.hidden};
    shapes[p + "self_attn.o_proj.weight"] = {m.hidden, q};
    if (m.arch == "qwen2") {
      shapes[p + "self_attn.q_proj.bias"] = {q};
      shapes[p + "self_attn.k_proj.bias"] = {kv};
      shapes[p + "self_attn.v_proj.bias"] = {kv};
    }
    if (m.arch == "qwen3") {
      shapes[p + "self_attn.q_norm.weight"] = {m.head_dim};
      shapes[p + "self_attn.k_norm.weight"] = {m.head_dim};
    }
    shapes[p + "input_layernorm.weight"] = {m.hidden};
    shapes[p + "post_attention_layernorm.weight"] = {m.hidden};
    shapes[p + "mlp.gate_proj.weight"] = {m.intermediate, m.hidden};
    shapes[p + "mlp.up_proj.weight"] = {m.intermediate, m.hidden};
    shapes[p + "mlp.down_proj.weight"] = {m.hidden, m.intermediate};
  }
  std::map<std::string, std::vector<float>> values;
  std::map<std::string, StTensor> tensors;
  uint32_t seed = 1;
  for (const auto& [name, shape] : shapes) {
    if (std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    auto v = gaussian(n, seed++, 0.05f);
    if (m.dtype == "BF16") {
      for (auto& x : v) x = bf16_to_f32(f32_to_bf16(x));  // exactly representable
      tensors[name] = {"BF16", shape, bf16_bytes(v)};
    } else {
      tensors[name] = {"F32", shape, f32_bytes(v)};
    }
    values[name] = std::move(v);
  }
  if (!m.sharded) {
    write_bytes(dir + "/model.safetensors", safetensors_bytes(tensors, json{{"format", "pt"}}));
    return values;
  }
  // Two shards: layer 0 and the embeddings in one, the rest in the other.
  std::map<std::string, StTensor> a, b;
  json weight_map = json::object();
  for (auto& [name, t] : tensors) {
    const bool first = name.find("layers.0.") != std::string::npos || name.find("embed") != std::string::npos;
    const std::string shard = first ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
    weight_map[name] = shard;
    (first ? a : b)[name] = std::move(t);
  }
  write_bytes(dir + "/model-00001-of-00002.safetensors", safetensors_bytes(a));
  write_bytes(dir + "/model-00002-of-00002.safetensors", safetensors_bytes(b));
  write_text(dir + "/model.safetensors.index.json", json{{"metadata", json::object()}, {"weight_map", weight_map}}.dump());
  return values;
}

}  // namespace ft::test

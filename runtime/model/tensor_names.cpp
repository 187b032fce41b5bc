#include "runtime/model/tensor_names.h"

#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ft {

namespace {

struct NamePair {
  std::string_view hf;
  std::string_view internal;
};

constexpr NamePair kGlobal[] = {
    {"model.embed_tokens.weight", "token_embd.weight"},
    {"model.norm.weight", "output_norm.weight"},
    {"lm_head.weight", "output.weight"},
};

// Suffixes after "model.layers.N."; the internal name is "blk.N." + value.
constexpr NamePair kPerLayer[] = {
    {"self_attn.q_proj.weight", "attn_q.weight"},     {"self_attn.k_proj.weight", "attn_k.weight"},
    {"self_attn.v_proj.weight", "attn_v.weight"},     {"self_attn.o_proj.weight", "attn_output.weight"},
    {"self_attn.q_proj.bias", "attn_q.bias"},         {"self_attn.k_proj.bias", "attn_k.bias"},
    {"self_attn.v_proj.bias", "attn_v.bias"},         {"self_attn.q_norm.weight", "attn_q_norm.weight"},
    {"self_attn.k_norm.weight", "attn_k_norm.weight"}, {"input_layernorm.weight", "attn_norm.weight"},
    {"post_attention_layernorm.weight", "ffn_norm.weight"}, {"mlp.gate_proj.weight", "ffn_gate.weight"},
    {"mlp.up_proj.weight", "ffn_up.weight"},          {"mlp.down_proj.weight", "ffn_down.weight"},
};

}  // namespace

std::optional<std::string> hf_to_internal_name(std::string_view hf) {
  for (const auto& p : kGlobal)
    if (p.hf == hf) return std::string(p.internal);
  constexpr std::string_view kLayers = "model.layers.";
  if (!hf.starts_with(kLayers)) return std::nullopt;
  hf.remove_prefix(kLayers.size());
  const size_t dot = hf.find('.');
  if (dot == std::string_view::npos || dot == 0) return std::nullopt;
  uint32_t layer = 0;
  const auto [end, ec] = std::from_chars(hf.data(), hf.data() + dot, layer);
  if (ec != std::errc() || end != hf.data() + dot) return std::nullopt;
  const std::string_view rest = hf.substr(dot + 1);
  for (const auto& p : kPerLayer)
    if (p.hf == rest) return fmt::format("blk.{}.{}", layer, p.internal);
  return std::nullopt;
}

std::vector<ExpectedTensor> expected_tensors(const ModelConfig& c) {
  const uint64_t hidden = c.hidden_size, vocab = c.vocab_size, ffn = c.intermediate_size;
  const uint64_t q_dim = uint64_t{c.num_heads} * c.head_dim, kv_dim = uint64_t{c.num_kv_heads} * c.head_dim;
  std::vector<ExpectedTensor> out = {
      {"token_embd.weight", {hidden, vocab}},
      {"output_norm.weight", {hidden}},
      {"output.weight", {hidden, vocab}, false},
  };
  for (uint32_t i = 0; i < c.num_layers; ++i) {
    auto name = [i](const char* s) { return fmt::format("blk.{}.{}", i, s); };
    out.push_back({name("attn_norm.weight"), {hidden}});
    out.push_back({name("attn_q.weight"), {hidden, q_dim}});
    out.push_back({name("attn_k.weight"), {hidden, kv_dim}});
    out.push_back({name("attn_v.weight"), {hidden, kv_dim}});
    out.push_back({name("attn_output.weight"), {q_dim, hidden}});
    if (c.qkv_bias) {
      out.push_back({name("attn_q.bias"), {q_dim}});
      out.push_back({name("attn_k.bias"), {kv_dim}});
      out.push_back({name("attn_v.bias"), {kv_dim}});
    }
    if (c.qk_norm) {
      out.push_back({name("attn_q_norm.weight"), {c.head_dim}});
      out.push_back({name("attn_k_norm.weight"), {c.head_dim}});
    }
    out.push_back({name("ffn_norm.weight"), {hidden}});
    out.push_back({name("ffn_gate.weight"), {hidden, ffn}});
    out.push_back({name("ffn_up.weight"), {hidden, ffn}});
    out.push_back({name("ffn_down.weight"), {ffn, hidden}});
  }
  return out;
}

std::string shape_string(const std::vector<uint64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

}  // namespace ft

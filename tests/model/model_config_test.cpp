#include "runtime/model/gguf_reader.h"
#include "runtime/model/gguf_writer.h"
#include "runtime/model/model_config.h"
#include "tests/model/model_test_util.h"

namespace ft {
namespace {

using json = nlohmann::json;

json hf_base(const std::string& architecture) {
  return {{"architectures", {architecture}}, {"vocab_size", 1000},   {"hidden_size", 512},
          {"intermediate_size", 1024},       {"num_hidden_layers", 4}, {"num_attention_heads", 8},
          {"num_key_value_heads", 2},        {"rms_norm_eps", 1e-5},   {"rope_theta", 500000.0},
          {"max_position_embeddings", 8192}, {"bos_token_id", 1},      {"eos_token_id", {2, 3}}};
}

TEST(ModelConfigHf, LlamaWithLlama3RopeScaling) {
  json j = hf_base("LlamaForCausalLM");
  j["rope_scaling"] = {{"rope_type", "llama3"},
                       {"factor", 8.0},
                       {"low_freq_factor", 1.0},
                       {"high_freq_factor", 4.0},
                       {"original_max_position_embeddings", 8192}};
  auto c = config_from_hf_json(j.dump());
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->arch, ModelArch::kLlama);
  EXPECT_EQ(c->head_dim, 64u);
  EXPECT_EQ(c->num_kv_heads, 2u);
  EXPECT_EQ(c->rope_style, RopeStyle::kNeox);
  EXPECT_FALSE(c->qkv_bias);
  EXPECT_FALSE(c->qk_norm);
  EXPECT_EQ(c->bos_id, 1);
  EXPECT_EQ(c->eos_id, 2);
  EXPECT_EQ(c->rope_scaling.type, RopeScalingType::kLlama3);
  ASSERT_EQ(c->rope_scaling.freq_factors.size(), 32u);
  // Highest frequencies (short wavelengths) untouched, lowest divided by the factor.
  EXPECT_EQ(c->rope_scaling.freq_factors.front(), 1.0f);
  EXPECT_EQ(c->rope_scaling.freq_factors.back(), 8.0f);
  for (size_t i = 1; i < 32; ++i) EXPECT_GE(c->rope_scaling.freq_factors[i], c->rope_scaling.freq_factors[i - 1]);
}

// Mistral loads as Llama; its attention window bounds the context (ft's full
// attention equals the window's up to that length).
TEST(ModelConfigHf, MistralIsLlamaWithTheContextAtItsWindow) {
  json j = hf_base("MistralForCausalLM");
  j["model_type"] = "mistral";
  j["max_position_embeddings"] = 32768;
  j["sliding_window"] = 4096;
  auto c = config_from_hf_json(j.dump());
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->arch, ModelArch::kLlama);
  EXPECT_EQ(c->max_positions, 4096u);
  j["sliding_window"] = nullptr;  // Mistral v0.2 and later
  c = config_from_hf_json(j.dump());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->max_positions, 32768u);
  // Qwen2 writes a window but uses it only with use_sliding_window.
  json q = hf_base("Qwen2ForCausalLM");
  q["sliding_window"] = 4096;
  q["use_sliding_window"] = false;
  EXPECT_EQ(config_from_hf_json(q.dump())->max_positions, 8192u);
  q["use_sliding_window"] = true;
  EXPECT_EQ(config_from_hf_json(q.dump())->max_positions, 4096u);
}

TEST(ModelConfigHf, Qwen2HasQkvBias) {
  json j = hf_base("Qwen2ForCausalLM");
  j["tie_word_embeddings"] = true;
  j["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}, {"original_max_position_embeddings", 32768}};
  auto c = config_from_hf_json(j.dump());
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->arch, ModelArch::kQwen2);
  EXPECT_TRUE(c->qkv_bias);
  EXPECT_TRUE(c->tied_embeddings);
  EXPECT_EQ(c->rope_scaling.type, RopeScalingType::kYarn);
  EXPECT_EQ(c->rope_scaling.factor, 4.0f);
  EXPECT_EQ(c->rope_scaling.original_max_positions, 32768u);
}

TEST(ModelConfigHf, Qwen3HasQkNormAndExplicitHeadDim) {
  json j = hf_base("Qwen3ForCausalLM");
  j["head_dim"] = 128;  // Qwen3 head_dim differs from hidden / heads
  auto c = config_from_hf_json(j.dump());
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->arch, ModelArch::kQwen3);
  EXPECT_EQ(c->head_dim, 128u);
  EXPECT_TRUE(c->qk_norm);
  EXPECT_FALSE(c->qkv_bias);
  EXPECT_EQ(c->rope_theta, 500000.0f);
}

TEST(ModelConfigHf, RefusalsAreClear) {
  auto moe = config_from_hf_json(hf_base("Qwen3MoeForCausalLM").dump());
  EXPECT_EQ(moe.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(moe.status().message().find("not yet supported"), std::string::npos);
  EXPECT_EQ(config_from_hf_json(hf_base("GPT2LMHeadModel").dump()).status().code(), ErrorCode::kUnsupported);
  json missing = hf_base("LlamaForCausalLM");
  missing.erase("hidden_size");
  auto m = config_from_hf_json(missing.dump());
  EXPECT_EQ(m.status().code(), ErrorCode::kCorrupt);
  EXPECT_NE(m.status().message().find("hidden_size"), std::string::npos);
  json bad_heads = hf_base("LlamaForCausalLM");
  bad_heads["num_key_value_heads"] = 3;
  EXPECT_EQ(config_from_hf_json(bad_heads.dump()).status().code(), ErrorCode::kCorrupt);
  json bad_type = hf_base("LlamaForCausalLM");
  bad_type["tie_word_embeddings"] = "yes";
  EXPECT_EQ(config_from_hf_json(bad_type.dump()).status().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(config_from_hf_json("{").status().code(), ErrorCode::kCorrupt);
  json dynamic = hf_base("LlamaForCausalLM");
  dynamic["rope_scaling"] = {{"type", "dynamic"}, {"factor", 2.0}};
  EXPECT_EQ(config_from_hf_json(dynamic.dump()).status().code(), ErrorCode::kUnsupported);
}

Result<ModelConfig> config_of(const std::string& arch, const std::function<void(GgufWriter&)>& extra,
                              bool with_output = true) {
  test::TempDir dir;
  GgufWriter w;
  const std::string p = arch + ".";
  w.set("general.architecture", GgufValue(arch));
  w.set(p + "context_length", GgufValue(uint32_t{4096}));
  w.set(p + "embedding_length", GgufValue(uint64_t{256}));  // u64 is accepted too
  w.set(p + "block_count", GgufValue(uint32_t{3}));
  w.set(p + "feed_forward_length", GgufValue(uint32_t{640}));
  w.set(p + "attention.head_count", GgufValue(uint32_t{8}));
  w.set(p + "attention.head_count_kv", GgufValue(uint32_t{4}));
  w.set(p + "attention.layer_norm_rms_epsilon", GgufValue(1e-6f));
  w.set(p + "rope.freq_base", GgufValue(1e6f));
  w.set("tokenizer.ggml.tokens", GgufValue::strings(std::vector<std::string>(77, "t")));
  w.set("tokenizer.ggml.eos_token_id", GgufValue(uint32_t{76}));
  if (extra) extra(w);
  if (with_output) {
    EXPECT_TRUE(w.add_tensor_bytes("output.weight", GgmlType::kF32, {256, 77}, std::vector<uint8_t>(256 * 77 * 4))
                    .ok());
  }
  EXPECT_TRUE(w.write(dir.file("m.gguf")).ok());
  FT_ASSIGN_OR_RETURN(GgufReader r, GgufReader::open(dir.file("m.gguf")));
  return config_from_gguf(r);
}

TEST(ModelConfigGguf, LlamaUsesNormRope) {
  auto c = config_of("llama", {});
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->arch, ModelArch::kLlama);
  EXPECT_EQ(c->rope_style, RopeStyle::kNorm);
  EXPECT_EQ(c->vocab_size, 77u);
  EXPECT_EQ(c->hidden_size, 256u);
  EXPECT_EQ(c->head_dim, 32u);  // hidden / heads without key_length
  EXPECT_EQ(c->num_kv_heads, 4u);
  EXPECT_EQ(c->rope_theta, 1e6f);
  EXPECT_EQ(c->max_positions, 4096u);
  EXPECT_FALSE(c->tied_embeddings);
  EXPECT_EQ(c->eos_id, 76);
  EXPECT_FALSE(c->bos_id.has_value());
}

TEST(ModelConfigGguf, Qwen2BiasQwen3NormKeyLengthAndTiedEmbeddings) {
  auto q2 = config_of("qwen2", {}, /*with_output=*/false);
  ASSERT_TRUE(q2.ok()) << q2.status().to_string();
  EXPECT_TRUE(q2->qkv_bias);
  EXPECT_EQ(q2->rope_style, RopeStyle::kNeox);
  EXPECT_TRUE(q2->tied_embeddings);
  auto q3 = config_of("qwen3", [](GgufWriter& w) {
    w.set("qwen3.attention.key_length", GgufValue(uint32_t{128}));
    w.set("qwen3.rope.scaling.type", GgufValue("yarn"));
    w.set("qwen3.rope.scaling.factor", GgufValue(4.0f));
    w.set("qwen3.rope.scaling.original_context_length", GgufValue(uint32_t{32768}));
  });
  ASSERT_TRUE(q3.ok()) << q3.status().to_string();
  EXPECT_TRUE(q3->qk_norm);
  EXPECT_EQ(q3->head_dim, 128u);
  EXPECT_EQ(q3->rope_scaling.type, RopeScalingType::kYarn);
  EXPECT_EQ(q3->rope_scaling.factor, 4.0f);
  EXPECT_EQ(q3->rope_scaling.original_max_positions, 32768u);
}

TEST(ModelConfigGguf, RopeFreqsTensorGivesLlama3Factors) {
  std::vector<float> factors(16);
  for (int i = 0; i < 16; ++i) factors[i] = 1.0f + i;
  auto c = config_of("llama", [&](GgufWriter& w) {
    ASSERT_TRUE(w.add_tensor_bytes("rope_freqs.weight", GgmlType::kF32, {16}, test::f32_bytes(factors)).ok());
  });
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->rope_scaling.type, RopeScalingType::kLlama3);
  EXPECT_EQ(c->rope_scaling.freq_factors, factors);
}

TEST(ModelConfigGguf, ErrorsNameTheKey) {
  auto moe = config_of("qwen3moe", {});
  EXPECT_EQ(moe.status().code(), ErrorCode::kUnsupported);
  auto bad = config_of("llama", [](GgufWriter& w) { w.set("llama.block_count", GgufValue("three")); });
  EXPECT_EQ(bad.status().code(), ErrorCode::kCorrupt);
  EXPECT_NE(bad.status().message().find("llama.block_count"), std::string::npos) << bad.status().message();
  auto zero = config_of("llama", [](GgufWriter& w) { w.set("llama.attention.head_count_kv", GgufValue(uint32_t{3})); });
  EXPECT_EQ(zero.status().code(), ErrorCode::kCorrupt);
}

}  // namespace
}  // namespace ft
